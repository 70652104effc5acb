package gcn

import (
	"time"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/spmm"
)

// A GAT layer's 3D-parallel forward and backward passes
// (docs/architecture.md, "A GAT layer's layout"). The layer reads its
// input [rows P, cols Q] and leaves its output [rows R, cols P] like a GCN
// layer, so the rest of the model is unchanged; in between, Y = F·W is
// held with whole rows (all heads) over P, and the aggregation's output
// with whole rows over R.

// gatTape is what a GAT layer's backward pass reads of its forward pass.
type gatTape struct {
	y    device.Mat             // Y = F̃·W, rows P, all columns
	s, t device.Buffer[float32] // s in the output rows (R), t in the input rows (P)
	// o is the aggregation's output plus the bias, rows R, all columns:
	// after ELU for a hidden layer (which ELU's gradient reads), before
	// the heads' mean for the last.
	o device.Mat
	// ones is a 1 per output row: HeadDotBackward with it adds the bias
	// to every row, HeadDotGrad with it sums the bias's gradient over the
	// rows, both on every device and in row order.
	ones device.Buffer[float32]
}

// gatEdges is one GAT layer's per-entry storage on the bound shards: α and,
// in training with dropout, α with attention dropout applied, nnz×K each.
// It outlives the pass (the backward pass reads it), so it is kept apart
// from the arena and grows with the largest batch seen.
type gatEdges struct {
	alpha, drop device.Buffer[float32]
}

// on returns α's and the dropped α's storage for the shard a of a layer
// with heads heads (drop empty when none was allocated).
func (e gatEdges) on(a *device.CSR, heads int) (alpha, drop device.Buffer[float32]) {
	n := a.NNZ() * heads
	alpha = e.alpha.Slice(0, n)
	if e.drop.Len() >= n {
		drop = e.drop.Slice(0, n)
	}
	return alpha, drop
}

// growBuf returns the first n elements of *b, replacing *b by a buffer a
// quarter larger than n when it holds fewer.
func growBuf[T device.Elem](dev device.Device, b *device.Buffer[T], n int) device.Buffer[T] {
	if b.Len() < n {
		device.Free(dev, *b)
		*b = device.Alloc[T](dev, n+n/4)
	}
	return b.Slice(0, n)
}

// gatSpec returns the constants of layer l's edge operations at step.
func (m *Model) gatSpec(d *layerDims, l int, training bool, step int) device.GAT {
	g := device.GAT{Heads: d.spec.heads, Slope: GATSlope}
	if training && m.Cfg.Dropout > 0 {
		b := m.cur
		g.Seed, g.Step, g.Site, g.P = m.Cfg.Seed, step, m.Cfg.AttentionSite(l), m.Cfg.Dropout
		g.RowVerts, g.ColVerts = b.outVerts[l], b.verts[l]
	}
	return g
}

// sLayouts returns the layouts that move s (K values per vertex) between
// the input rows (P, input order) and the output rows (R, output order):
// K columns repeated once per block over Q, so that each rank's block is
// its own whole copy and one redistribution moves it.
func (m *Model) sLayouts(d *layerDims, l int) (in, out grid.Layout) {
	sh, w := m.cur.sh, m.g.Size(d.q)*d.spec.heads
	return sh.layout(grid.InputOrder(l), d.p, d.q, w), sh.layout(grid.OutputOrder(l), d.r, d.q, w)
}

// gatForward runs GAT layer l on its input x (after dropout; rows P, cols
// Q) and returns its output (rows R, cols P).
func (m *Model) gatForward(d *layerDims, lt *layerTape, x device.Mat, l int, training bool, step int) (device.Mat, error) {
	g, b := m.g, m.cur
	ar, K := b.ar, d.spec.heads
	gt := &lt.gat
	cw := d.spec.projWidth()
	w := d.weight
	// 1. Y = AllReduce_Q(F̃·W_block), whole rows; s and t per head.
	gt.y = ar.mat(d.nP, cw)
	m.gemm(spmm.NoTrans, spmm.NoTrans, x, w.mat(w.W), gt.y)
	if err := m.pmmAllReduce(g.Comm(d.q), gt.y); err != nil {
		return device.Mat{}, err
	}
	gt.t = ar.vec(d.nP * K)
	m.dev.HeadDot(gt.t, gt.y, d.attDst.W, K)
	sP := ar.vec(d.nP * K)
	m.dev.HeadDot(sP, gt.y, d.attSrc.W, K)
	// 2. s into the output rows.
	gt.s = ar.vec(d.nR * K)
	inL, outL := m.sLayouts(d, l)
	if err := m.redistribute(device.Matrix(gt.s, d.nR, K), outL, device.Matrix(sP, d.nP, K), inL, grid.InputOrder(l)); err != nil {
		return device.Mat{}, err
	}
	// 3. The softmax over each row's entries, its statistics all-reduced
	// over P (the axis that splits a row's columns).
	alpha, drop := b.gat[l].on(d.a, K)
	spec := m.gatSpec(d, l, training, step)
	mx, sums := ar.vec(d.nR*K), ar.vec(d.nR*K)
	m.dev.GATScores(alpha, mx, d.a, gt.s, gt.t, spec)
	if err := m.allReduceOp(g.Comm(d.p), mx, collectives.Max); err != nil {
		return device.Mat{}, err
	}
	m.dev.GATExpSum(alpha, sums, d.a, mx, spec)
	if err := m.allReduce(g.Comm(d.p), sums); err != nil {
		return device.Mat{}, err
	}
	m.dev.GATNormalize(alpha, drop, d.a, alpha, sums, spec)
	coef := alpha
	if spec.P > 0 {
		coef = drop
	}
	// 4. O = AllReduce_P(α ⊛ Y).
	gt.o = ar.mat(d.nR, cw)
	m.spmmHeads(gt.o, d.a, coef, device.Buffer[int32]{}, gt.y, K)
	if err := m.pmmAllReduce(g.Comm(d.p), gt.o); err != nil {
		return device.Mat{}, err
	}
	gt.ones = ar.vec(d.nR)
	m.dev.Fill(device.Matrix(gt.ones, d.nR, 1), 1)
	m.dev.HeadDotBackward(gt.o, gt.ones, d.bias.W, 1)
	// 5. ELU or the heads' mean, then this rank's columns over P.
	full := gt.o
	if d.spec.hidden {
		m.dev.ELU(gt.o, gt.o)
	} else {
		full = ar.mat(d.nR, d.spec.out)
		m.dev.HeadMean(full, gt.o, K)
	}
	out := ar.mat(d.nR, d.dOut)
	m.dev.Copy(out, full.Slice(0, d.nR, d.out0, d.out1))
	if d.spec.hidden {
		lt.act = out // what Embeddings returns
	}
	return out, nil
}

// gatBackward propagates dOut (rows R, cols P) through GAT layer l,
// leaving its parameters' gradients, all-reduced, in their G, and returns
// the gradient of the layer's input after dropout (rows P, cols Q), or a
// zero Mat when the layer's input needs none.
func (m *Model) gatBackward(d *layerDims, lt *layerTape, dOut device.Mat, l int) (device.Mat, error) {
	g, b, tp := m.g, m.cur, &m.tp
	ar, K := b.ar, d.spec.heads
	gt := &lt.gat
	cw := d.spec.projWidth()
	// Whole rows of the output's gradient: each rank adds its columns
	// into zeros and the sum over P fills in the rest.
	wide := ar.mat(d.nR, d.spec.out)
	m.dev.Fill(wide, 0)
	m.dev.Copy(wide.Slice(0, d.nR, d.out0, d.out1), dOut)
	if err := m.pmmAllReduce(g.Comm(d.p), wide); err != nil {
		return device.Mat{}, err
	}
	do := wide
	if d.spec.hidden {
		m.dev.ELUBackward(wide, wide, gt.o)
	} else {
		do = ar.mat(d.nR, cw)
		m.dev.HeadMeanBackward(do, wide, K)
	}
	// The softmax's backward pass on the shard's entries.
	alpha, drop := b.gat[l].on(d.a, K)
	spec := m.gatSpec(d, l, tp.training, tp.step)
	coef := alpha
	if spec.P > 0 {
		coef = drop
	}
	da := growBuf(m.dev, &b.dalpha, d.a.NNZ()*K)
	m.dev.SDDMMHeads(da, d.a, do, gt.y, K)
	r := ar.vec(d.nR * K)
	m.dev.GATRowDot(r, da, d.a, alpha, spec)
	if err := m.allReduce(g.Comm(d.p), r); err != nil {
		return device.Mat{}, err
	}
	ds := ar.vec(d.nR * K)
	m.dev.GATLogitGrad(da, ds, d.a, alpha, da, r, gt.s, gt.t, spec)
	if err := m.allReduce(g.Comm(d.p), ds); err != nil {
		return device.Mat{}, err
	}
	// dt are the logits' column sums, dY = αᵀ ⊛ dO: both over the
	// transpose, summed over R. The bias's gradient, dO's column sums
	// over this rank's rows R, shares dt's all-reduce.
	perm := b.perms[l]
	dtb := ar.vec(d.nP*K + cw)
	dt, db := dtb.Slice(0, d.nP*K), dtb.Slice(d.nP*K, d.nP*K+cw)
	m.dev.EdgeSums(dt, d.at, da, perm, K)
	m.dev.HeadDotGrad(db, gt.ones, do, 1)
	if err := m.allReduce(g.Comm(d.r), dtb); err != nil {
		return device.Mat{}, err
	}
	m.dev.Copy(device.Matrix(d.bias.G, 1, cw), device.Matrix(db, 1, cw))
	dy := ar.mat(d.nP, cw)
	m.spmmHeads(dy, d.at, coef, perm, do, K)
	if err := m.pmmAllReduce(g.Comm(d.r), dy); err != nil {
		return device.Mat{}, err
	}
	// ds back to the input rows; then s's and t's share of dY, and the
	// attention vectors' gradients.
	dsP := ar.vec(d.nP * K)
	inL, outL := m.sLayouts(d, l)
	if err := m.redistribute(device.Matrix(dsP, d.nP, K), inL, device.Matrix(ds, d.nR, K), outL, grid.OutputOrder(l)); err != nil {
		return device.Mat{}, err
	}
	m.dev.HeadDotGrad(d.attSrc.G, dsP, gt.y, K)
	m.dev.HeadDotGrad(d.attDst.G, dt, gt.y, K)
	m.dev.HeadDotBackward(dy, dsP, d.attSrc.W, K)
	m.dev.HeadDotBackward(dy, dt, d.attDst.W, K)
	// dW = F̃ᵀ·dY, all-reduced over P with the attention vectors'
	// gradients (adjacent in the gradient buffer); dF̃ = dY·W_blockᵀ is
	// complete, as dY has every column.
	w := d.weight
	m.gemm(spmm.Trans, spmm.NoTrans, lt.inDrop, dy, w.mat(w.G))
	if err := m.allReduce(g.Comm(d.p), m.gatGrads(d)); err != nil {
		return device.Mat{}, err
	}
	if !d.spec.needInputGrad {
		return device.Mat{}, nil
	}
	dx := ar.mat(d.nP, d.dIn)
	m.gemm(spmm.NoTrans, spmm.Trans, dy, w.mat(w.W), dx)
	return dx, nil
}

// gatGrads is the span of the gradient buffer holding a GAT layer's
// gradients: W's, then the two attention vectors' (paramShapes).
func (m *Model) gatGrads(d *layerDims) device.Buffer[float32] {
	w, s, t := d.weight, d.attSrc, d.attDst
	if s.gOff != w.gOff+w.Len() || t.gOff != s.gOff+s.Len() {
		panic("gcn: a GAT layer's attention gradients do not follow W's in the gradient buffer")
	}
	return m.grads.Slice(w.gOff, t.gOff+t.Len())
}

func (m *Model) spmmHeads(dst device.Mat, a *device.CSR, alpha device.Buffer[float32], perm device.Buffer[int32], b device.Mat, heads int) {
	m.waitDevice()
	t0 := time.Now()
	m.dev.SpMMHeads(dst, a, alpha, perm, b, heads)
	m.waitDevice()
	m.Times.SpMM += time.Since(t0)
}

// bindGAT sizes b's per-entry storage for the GAT layers on sh (growing,
// so that rebinding mini-batches allocates nothing once the largest has
// been seen) and shares their output vertex ids.
func (m *Model) bindGAT(b *bound, sh *Shards) {
	for len(b.gat) < len(m.specs) {
		b.gat = append(b.gat, gatEdges{})
		b.outVerts = append(b.outVerts, device.Buffer[int32]{})
	}
	for l := range m.specs {
		d := &b.layers[l]
		n := d.a.NNZ() * d.spec.heads
		e := &b.gat[l]
		growBuf(m.dev, &e.alpha, n)
		if m.Cfg.Dropout > 0 && !sh.evalOnly {
			growBuf(m.dev, &e.drop, n)
		}
		device.ShareInto(m.dev, &b.outVerts[l], sh.Orders.Order[grid.OutputOrder(l)][d.rr0:d.rr1])
	}
}
