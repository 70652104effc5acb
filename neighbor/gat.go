package neighbor

import (
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/spmm"
)

// A GAT layer on a message-flow graph (gcn.GAT has the math). The
// targets are the block's rows, which are its first sources, and each
// attends over its sampled neighbours and itself (gatPattern). A rank
// holds its targets' rows whole, so the softmax needs no all-reduce: the
// layer is gcn's GAT on one shard holding every column. Forward, with
// K heads and P = K·F' projected columns:
//
//	Y = H·W (sources × P); s = Y[targets]·a_src, t = Y·a_dst (per head)
//	α = softmax_row(LeakyReLU(s_i + t_j)), attention dropout on α
//	out = α·Y per head + b; ELU (hidden) or the head mean (last layer)
//
// The backward pass runs the same operations' adjoints; the products
// with αᵀ read α through the transposed block and its perm (Batch.Perm).

// gatBufs is one GAT layer's step storage, grown to the largest step.
type gatBufs struct {
	perm device.Buffer[int32] // Batch.Perm[l]
	// y = H·W; s, t the per-head scores of targets and sources; alpha
	// the attention (exp scores first, normalised in place), drop it
	// after attention dropout; out the aggregation (the ELU output of a
	// hidden layer); mx and sums the softmax's row maxima and sums.
	y, out         device.Buffer[float32]
	s, t, mx, sums device.Buffer[float32]
	alpha, drop    device.Buffer[float32]
	dout, dy, da   device.Buffer[float32]
	r, ds, dt      device.Buffer[float32]
	// ones is a 1 per target: HeadDotBackward with it adds the bias to
	// every row, HeadDotGrad with it sums the bias's gradient.
	ones                device.Buffer[float32]
	nDst, nSrc, nnz, pw int
}

// gatSpec is layer l's attention constants; attention dropout applies in
// training (p > 0), keyed by the global ids of target and source.
func (m *Model) gatSpec(l, step int, training bool, verts device.Buffer[int32], nDst int) device.GAT {
	g := device.GAT{Heads: m.heads[l], Slope: gcn.GATSlope}
	if training {
		g.Seed, g.Step, g.Site, g.P = m.Cfg.Seed, step, m.Cfg.AttentionSite(l), m.Cfg.Dropout
		g.RowVerts, g.ColVerts = verts.Slice(0, nDst), verts
	}
	return g
}

// gatForward runs GAT layer l on its (dropped-out) input h, the block's
// sources, and returns its output for the targets: the ELU of the heads
// concatenated for a hidden layer (kept for the backward pass), the
// logits (the heads' mean) for the last.
func (m *Model) gatForward(l, step int, training bool, h device.Mat, verts device.Buffer[int32]) device.Mat {
	dev := m.dev
	lb := &m.ls[l]
	g := &lb.gat
	K := m.heads[l]
	pw, as, ad := m.Params[m.wIdx[l]], m.Params[m.aIdx[l]], m.Params[m.aIdx[l]+1]
	P := pw.Cols
	nSrc, nDst := h.Rows(), lb.fwd.Rows()
	nnz := lb.fwd.NNZ() * K
	g.nDst, g.nSrc, g.nnz, g.pw = nDst, nSrc, nnz, P

	y := m.mat(&g.y, nSrc, P)
	dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, h, mat(pw, pw.W), 0, y)
	s, t := grow(dev, &g.s, nDst*K), grow(dev, &g.t, nSrc*K)
	dev.HeadDot(s, y.Slice(0, nDst, 0, P), as.W, K)
	dev.HeadDot(t, y, ad.W, K)

	spec := m.gatSpec(l, step, training, verts, nDst)
	alpha := grow(dev, &g.alpha, nnz)
	mx, sums := grow(dev, &g.mx, nDst*K), grow(dev, &g.sums, nDst*K)
	dev.GATScores(alpha, mx, &lb.fwd, s, t, spec)
	dev.GATExpSum(alpha, sums, &lb.fwd, mx, spec)
	att := alpha
	var drop device.Buffer[float32]
	if spec.P > 0 {
		drop = grow(dev, &g.drop, nnz)
		att = drop
	}
	dev.GATNormalize(alpha, drop, &lb.fwd, alpha, sums, spec)

	out := m.mat(&g.out, nDst, P)
	dev.SpMMHeads(out, &lb.fwd, att, device.Buffer[int32]{}, y, K)
	addBias(dev, out, &g.ones, m.Params[m.aIdx[l]+2])
	if l < m.Cfg.Layers-1 {
		dev.ELU(out, out)
		return out
	}
	z := m.mat(&lb.z, nDst, m.Cfg.Classes)
	dev.HeadMean(z, out, K)
	return z
}

// gatBackward takes dz, the gradient of layer l's output (the ELU's
// output for a hidden layer, the logits for the last), writes the
// gradients of W, att_src, att_dst and the bias into their G, and returns the
// gradient of the layer's input before its dropout (false for the first
// layer, whose input needs none). h is the dropped-out input. dz of a
// hidden layer is overwritten.
func (m *Model) gatBackward(l, step int, training bool, dz, h device.Mat) (device.Mat, bool) {
	dev := m.dev
	lb := &m.ls[l]
	g := &lb.gat
	K := m.heads[l]
	pw, as, ad := m.Params[m.wIdx[l]], m.Params[m.aIdx[l]], m.Params[m.aIdx[l]+1]
	nDst, nSrc, nnz, P := g.nDst, g.nSrc, g.nnz, g.pw
	y := device.Matrix(g.y.Slice(0, nSrc*P), nSrc, P)
	s, t := g.s.Slice(0, nDst*K), g.t.Slice(0, nSrc*K)
	alpha := g.alpha.Slice(0, nnz)
	spec := m.gatSpec(l, step, training, lb.verts.Slice(0, nSrc), nDst)
	att := alpha
	if spec.P > 0 {
		att = g.drop.Slice(0, nnz)
	}
	perm := g.perm.Slice(0, lb.bwd.NNZ())

	var dout device.Mat
	if l < m.Cfg.Layers-1 {
		out := device.Matrix(g.out.Slice(0, nDst*P), nDst, P)
		dev.ELUBackward(dz, dz, out)
		dout = dz
	} else {
		dout = m.mat(&g.dout, nDst, P)
		dev.HeadMeanBackward(dout, dz, K)
	}
	dev.HeadDotGrad(m.Params[m.aIdx[l]+2].G, g.ones.Slice(0, nDst), dout, 1)
	// ∂/∂α (after dropout, then before it inside GATRowDot), the
	// softmax's row dots, ∂/∂(s_i + t_j) per entry and its row sums ∂s.
	da := grow(dev, &g.da, nnz)
	dev.SDDMMHeads(da, &lb.fwd, dout, y, K)
	r, ds := grow(dev, &g.r, nDst*K), grow(dev, &g.ds, nDst*K)
	dev.GATRowDot(r, da, &lb.fwd, alpha, spec)
	dev.GATLogitGrad(da, ds, &lb.fwd, alpha, da, r, s, t, spec)
	// ∂t: the column sums, read through the transpose.
	dt := grow(dev, &g.dt, nSrc*K)
	dev.EdgeSums(dt, &lb.bwd, da, perm, K)
	// ∂Y = αᵀ·∂out, plus the scores' terms.
	dy := m.mat(&g.dy, nSrc, P)
	dev.SpMMHeads(dy, &lb.bwd, att, perm, dout, K)
	dev.HeadDotGrad(as.G, ds, y.Slice(0, nDst, 0, P), K)
	dev.HeadDotGrad(ad.G, dt, y, K)
	dev.HeadDotBackward(dy.Slice(0, nDst, 0, P), ds, as.W, K)
	dev.HeadDotBackward(dy, dt, ad.W, K)
	dev.Gemm(spmm.Trans, spmm.NoTrans, 1, h, dy, 0, mat(pw, pw.G))
	if l == 0 {
		return device.Mat{}, false
	}
	win := m.widths[l]
	din := m.mat(&lb.din, nSrc, win)
	dev.Gemm(spmm.NoTrans, spmm.Trans, 1, dy, mat(pw, pw.W), 0, din)
	if training {
		dev.ApplyMask(din, din, lb.keep.Slice(0, nSrc*((win+63)/64)), m.Cfg.Dropout)
	}
	return din, true
}

// addBias adds the bias b (1 × out.Cols()) to every row of out, through
// *ones, a 1 per row, grown and filled here.
func addBias(dev device.Device, out device.Mat, ones *device.Buffer[float32], b *Param) {
	n := out.Rows()
	o := grow(dev, ones, n)
	dev.Fill(device.Matrix(o, n, 1), 1)
	dev.HeadDotBackward(out, o, b.W, 1)
}
