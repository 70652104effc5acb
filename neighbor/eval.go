package neighbor

import (
	"fmt"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/spmm"
)

// Evaluator computes the full-graph outputs, layer by layer, without
// sampling or dropout: each rank computes the rows of its own vertex
// block. A layer's aggregation needs its rows' neighbours' transformed
// input, so each layer transforms its block first (T = H·W_neigh,
// narrower than H for the first layer), receives the rows of T its
// operator's columns name from their owners (halo: one alltoallv a
// layer, where an all-gather moved N × out values to every rank), and
// aggregates its rows: Z = Â_block·T (GCN) or D^-1 A_block·T + H·W_self
// (SAGE). A GAT layer gathers its projection Y = H·W (every head, K·F'
// columns) the same way, scores its rows' whole neighbourhoods (Â's
// pattern: every neighbour and the vertex itself) from its own rows' s
// and every vertex's t (computed from the gathered Y), and aggregates
// α·Y; its rows are whole on the rank, so the softmax is local. The
// gather runs on a communicator of its own, so evaluation bytes never mix
// with training bytes.
type Evaluator struct {
	comm collectives.Comm
	g    *Graph
	m    *Model

	adj   device.CSR
	rows  *spmm.CSR // adj on the host, until the halo renumbers it
	halo  *halo
	feats device.Buffer[float32]
	// featsB holds the features in bfloat16 where the graph does
	// (feats unused): the first layer's GEMMs read them as their
	// bfloat16 operand, with the weight rounded into wB.
	featsB device.Buffer[uint16]
	wB     device.Buffer[uint16]
	labels device.Buffer[int32]
	masks  [3]device.Buffer[uint8]

	h, t, full, z   device.Buffer[float32]
	gs, gt, alpha   device.Buffer[float32] // a GAT layer's s, t and α
	ones            device.Buffer[float32] // a 1 per row, to add a GAT bias
	mx, sums, out   device.Buffer[float32]
	best            device.Buffer[float32]
	arg             device.Buffer[int64]
	vmx, vsums      device.Buffer[float32] // the validation loss's
	vgrad           device.Buffer[float32]
	sums7           []float64 // hits, split sizes and the validation loss sum
	tHost, fullHost []float32
}

// NewEvaluator returns rank g.Rank's evaluator; comm is the evaluation
// communicator (same ranks and order as the training one).
func NewEvaluator(comm collectives.Comm, g *Graph, m *Model) *Evaluator {
	dev := m.dev
	e := &Evaluator{comm: comm, g: g, m: m, sums7: make([]float64, 7)}
	nb := g.V1 - g.V0
	e.rows = evalRows(g, m.Cfg.Layer)
	if g.BF16() {
		e.featsB = device.Alloc[uint16](dev, nb*g.F)
		device.Upload(dev, e.featsB, 0, g.FeaturesB)
	} else {
		e.feats = device.Alloc[float32](dev, nb*g.F)
		device.Upload(dev, e.feats, 0, g.Features)
	}
	e.labels = device.Alloc[int32](dev, nb)
	device.Upload(dev, e.labels, 0, g.Labels[g.V0:g.V1])
	for k, mask := range [3][]bool{g.Train, g.Val, g.Test} {
		b := make([]uint8, nb)
		for i := range b {
			if mask[g.V0+i] {
				b[i] = 1
			}
		}
		e.masks[k] = device.Alloc[uint8](dev, nb)
		device.Upload(dev, e.masks[k], 0, b)
	}
	return e
}

// evalRows returns rows [V0, V1) of the full-graph operator: Â for GCN
// (and its pattern, A + I, for GAT, which reads no values), D^-1 A (the
// mean over all neighbours, no self loop) for SAGE.
func evalRows(g *Graph, layer gcn.Layer) *spmm.CSR {
	src := g.Hat
	if layer == gcn.SAGELayer {
		src = g.Topo
	}
	lo, hi := src.RowPtr[g.V0], src.RowPtr[g.V1]
	out := &spmm.CSR{Rows: g.V1 - g.V0, Cols: g.N, RowPtr: make([]int64, g.V1-g.V0+1),
		ColIdx: src.ColIdx[lo:hi:hi], Val: make([]float32, hi-lo)}
	for i := range out.Rows {
		out.RowPtr[i+1] = src.RowPtr[g.V0+i+1] - lo
	}
	for i := range out.Rows {
		p, q := out.RowPtr[i], out.RowPtr[i+1]
		for e := p; e < q; e++ {
			if layer == gcn.SAGELayer {
				out.Val[e] = float32(1 / float64(q-p))
			} else {
				out.Val[e] = src.Val[lo+e]
			}
		}
	}
	return out
}

// Evaluate returns the accuracy of the full-graph forward pass on the
// train, validation and test vertices, and the mean cross-entropy over
// the validation vertices (the training loss's device ops over the
// validation mask; a rank's rows are whole, so only the sums cross ranks,
// with the hit counts in one all-reduce).
func (e *Evaluator) Evaluate() (gcn.Accuracy, error) {
	logits, err := e.forward()
	if err != nil {
		return gcn.Accuracy{}, err
	}
	dev := e.m.dev
	nb := logits.Rows()
	best := grow(dev, &e.best, nb)
	arg := grow(dev, &e.arg, nb)
	dev.ArgMax(best, arg, logits, 0)
	c := dev.CountHits(arg, e.labels, e.masks)
	mx, sums := grow(dev, &e.vmx, nb), grow(dev, &e.vsums, 2*nb)
	dev.RowMax(mx, logits, e.masks[1])
	dev.SoftmaxSums(sums, logits, mx, e.labels, e.masks[1], 0)
	d := device.Matrix(grow(dev, &e.vgrad, nb*logits.Cols()), nb, logits.Cols())
	loss, _ := dev.SoftmaxGrad(d, logits, mx, sums, e.labels, e.masks[1], 0)
	// Counts below 2^53 are exact in float64.
	t := e.sums7
	for k, h := range c {
		t[k] = float64(h)
	}
	t[6] = loss
	if err := e.comm.AllReduceF64(t, collectives.Sum); err != nil {
		return gcn.Accuracy{}, err
	}
	return gcn.SplitAccuracy([6]float64(t[:6]), t[6]), nil
}

// forward returns this rank's block of the full-graph logits.
func (e *Evaluator) forward() (device.Mat, error) { return e.forwardTo(e.m.Cfg.Layers - 1) }

// Output returns this rank's block (rows V0 to V1 of the graph's order)
// of layer l's full-graph output, downloaded: the logits for the last
// layer, a hidden layer's ReLU (GAT: ELU) output otherwise
// (0 ≤ l < Layers).
func (e *Evaluator) Output(l int) ([]float32, int, error) {
	if l < 0 || l >= e.m.Cfg.Layers {
		panic(fmt.Sprintf("neighbor: output of layer %d of %d", l, e.m.Cfg.Layers))
	}
	z, err := e.forwardTo(l)
	if err != nil {
		return nil, 0, err
	}
	out := make([]float32, z.Rows()*z.Cols())
	device.DownloadMat(e.m.dev, out, z)
	return out, z.Cols(), nil
}

// forwardTo returns this rank's block of layer last's output (the logits
// for the last layer, the ReLU's (GAT: ELU's) output for a hidden one).
func (e *Evaluator) forwardTo(last int) (device.Mat, error) {
	m, g, dev := e.m, e.g, e.m.dev
	nb := g.V1 - g.V0
	var h device.Mat // the layer's input: on bfloat16 features, none in the first (gemmIn)
	if !g.BF16() {
		h = device.Matrix(e.feats, nb, g.F)
	}
	L := m.Cfg.Layers
	var z device.Mat
	if e.halo == nil {
		// Collective, as every evaluation is: the first one plans it.
		h, err := newHalo(e.comm, g, e.rows)
		if err != nil {
			return device.Mat{}, err
		}
		dev.UploadCSRInto(&e.adj, e.rows)
		e.halo, e.rows = h, nil
	}
	for l := range L {
		wout := m.widths[l+1]
		pw := m.Params[m.wIdx[l]]
		if m.heads[l] > 0 {
			// The gathered matrix is the projection, all heads.
			wout = pw.Cols
		}
		t := m.mat(&e.t, nb, wout)
		e.gemmIn(l, h, pw, 0, t)
		e.tHost = resize(e.tHost, nb*wout)
		device.DownloadMat(dev, e.tHost, t)
		e.fullHost = resize(e.fullHost, e.halo.rows*wout)
		if err := e.halo.exchange(e.comm, e.tHost, nb, wout, e.fullHost); err != nil {
			return device.Mat{}, err
		}
		// A host device reads the exchanged rows where they landed; a GPU
		// copies them into e.full, grown once.
		device.ShareInto(dev, &e.full, e.fullHost)
		full := device.Matrix(e.full, e.halo.rows, wout)
		if m.heads[l] > 0 {
			z = e.gatLayer(l, t, full)
			if l < L-1 {
				h = z
			}
			if l == last {
				break
			}
			continue
		}
		z = m.mat(&e.z, nb, wout)
		dev.SpMM(z, &e.adj, full)
		if s := m.sIdx[l]; s >= 0 {
			e.gemmIn(l, h, m.Params[s], 1, z)
		}
		if l < L-1 {
			h = m.mat(&e.h, nb, wout)
			dev.ReLU(h, z)
		}
		if l == last {
			if l < L-1 {
				return h, nil
			}
			break
		}
	}
	return z, nil
}

// gemmIn is dst = h·p + beta·dst for layer l's input h; in the first
// layer on bfloat16 features, the features themselves as GemmBF16's
// operand and p rounded (what a mixed-precision device's Gemm computes
// on the widened features, bit for bit: devicetest's Mixed).
func (e *Evaluator) gemmIn(l int, h device.Mat, p *Param, beta float32, dst device.Mat) {
	dev := e.m.dev
	if l > 0 || !e.g.BF16() {
		dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, h, mat(p, p.W), beta, dst)
		return
	}
	wb := device.MatrixBF16(grow(dev, &e.wB, p.Rows*p.Cols), p.Rows, p.Cols)
	dev.PackMatBF16(wb, mat(p, p.W))
	xb := device.MatrixBF16(e.featsB, e.g.V1-e.g.V0, e.g.F)
	dev.GemmBF16(spmm.NoTrans, spmm.NoTrans, 1, xb, wb, beta, dst)
}

// gatLayer finishes GAT layer l on this rank's rows from y, its rows'
// projection, and full, every vertex's: the ELU output of a hidden layer
// (in e.out, which the next layer reads as its input) or the logits.
func (e *Evaluator) gatLayer(l int, y, full device.Mat) device.Mat {
	m, dev := e.m, e.m.dev
	K := m.heads[l]
	as, ad := m.Params[m.aIdx[l]], m.Params[m.aIdx[l]+1]
	nb, n, P := y.Rows(), full.Rows(), y.Cols()
	s, t := grow(dev, &e.gs, nb*K), grow(dev, &e.gt, n*K)
	dev.HeadDot(s, y, as.W, K)
	dev.HeadDot(t, full, ad.W, K)
	spec := device.GAT{Heads: K, Slope: gcn.GATSlope}
	alpha := grow(dev, &e.alpha, e.adj.NNZ()*K)
	mx, sums := grow(dev, &e.mx, nb*K), grow(dev, &e.sums, nb*K)
	dev.GATScores(alpha, mx, &e.adj, s, t, spec)
	dev.GATExpSum(alpha, sums, &e.adj, mx, spec)
	dev.GATNormalize(alpha, device.Buffer[float32]{}, &e.adj, alpha, sums, spec)
	out := m.mat(&e.out, nb, P)
	dev.SpMMHeads(out, &e.adj, alpha, device.Buffer[int32]{}, full, K)
	addBias(dev, out, &e.ones, m.Params[m.aIdx[l]+2])
	if l < m.Cfg.Layers-1 {
		dev.ELU(out, out)
		return out
	}
	z := m.mat(&e.z, nb, m.Cfg.Classes)
	dev.HeadMean(z, out, K)
	return z
}
