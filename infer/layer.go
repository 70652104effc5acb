package infer

import (
	"fmt"
	"slices"

	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/spmm"
)

// layerRun is one layer of a forward pass: every vertex's transformed
// input (T = H·W, a GAT layer's projection) on the device, and for a GAT
// layer every vertex's t = a_dst·T per head.
type layerRun struct {
	e     *Engine
	w     Weights
	l     int
	s     gcn.LayerSpec
	width int
	full  []float32 // every vertex's T, n × width
	local []float32 // this rank's rows of T
	fullM device.Mat
	// half is every vertex's T in bfloat16 instead of full (halfT), fullB
	// the device's view of it.
	half  []uint16
	fullB device.MatBF16
	t     device.Buffer[float32]
	csr   device.CSR // the block's rows of the adjacency, refilled block by block
}

func (lr *layerRun) start() error {
	e := lr.e
	if lr.half != nil {
		lr.fullB = device.MatrixBF16(device.Share(e.dev, lr.half), e.n, lr.width)
		return nil
	}
	lr.fullM = e.share(lr.full, e.n, lr.width)
	if lr.s.Heads > 0 {
		lr.t = device.Alloc[float32](e.dev, e.n*lr.s.Heads)
		e.dev.HeadDot(lr.t, lr.fullM, lr.param("att_dst"), lr.s.Heads)
	}
	return nil
}

// param uploads layer l's parameter gcn<l>.<name>.
func (lr *layerRun) param(name string) device.Buffer[float32] {
	return device.Share(lr.e.dev, lr.w[fmt.Sprintf("gcn%d.%s", lr.l, name)])
}

// block computes the layer's output on rows (indices into block b, which
// is this rank's k-th, whose adjacency rows are strip) into out,
// len(rows) × s.Out, on the host, and returns it and its activation
// before the residual is added (the same slice without a residual): what
// gcn.Model.Embeddings returns.
func (lr *layerRun) block(k int, b [2]int, rows []int32, strip *spmm.CSR, out []float32) (_, act []float32, err error) {
	e, s := lr.e, lr.s
	a := selectRows(strip, rows)
	if s.Self && !e.meanStrips {
		a = gcn.MeanRows(a, func(i int) int32 { return int32(b[0]) + rows[i] })
	}
	n := len(rows)
	if n == 0 {
		return out, out, nil
	}
	// The block's CSR and its output go to the device without copies on
	// a host device (shared, and z is out itself): at R-MAT scale 19 on 8
	// ranks the copies were half of an evaluation's time on the cores.
	e.dev.UploadCSRInto(&lr.csr, a)
	csr := &lr.csr
	if s.Heads > 0 {
		lr.gat(b, rows, csr, out)
		return out, out, nil
	}
	z := e.share(out, n, s.Out)
	if lr.half != nil {
		// T rounded once (transformBF16): the product the device's SpMM
		// would make on it, bit for bit.
		e.dev.SpMMBF16(z, csr, lr.fullB)
	} else {
		e.dev.SpMM(z, csr, lr.fullM)
	}
	var in []float32 // the layer's input on rows
	if s.Self || s.Residual {
		h, err := e.input(lr.w, k, lr.l)
		if err != nil {
			return nil, nil, err
		}
		in = gatherRows(h, rows, s.In)
	}
	if s.Self {
		e.dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, e.share(in, n, s.In), e.share(lr.w[fmt.Sprintf("gcn%d.self", lr.l)], s.In, s.Out), 1, z)
	}
	if s.Hidden {
		if s.Norm {
			ss := device.Alloc[float32](e.dev, n)
			rms := device.Alloc[float32](e.dev, n)
			u := device.Matrix(device.Alloc[float32](e.dev, n*s.Out), n, s.Out)
			e.dev.SumSquares(ss, z)
			e.dev.RMSNormApply(z, u, rms, z, ss, lr.param("norm"), device.RMSNorm{N: s.Out, Eps: gcn.NormEps}, true)
		} else {
			e.dev.ReLU(z, z)
		}
	}
	device.DownloadMat(e.dev, out, z)
	act = out
	if s.Residual {
		act = slices.Clone(out)
		for i, v := range in {
			out[i] += v
		}
	}
	return out, act, nil
}

// gat writes a GAT layer's output on rows of block b into out: scores of the rows'
// neighbourhoods from their s and every vertex's t, the softmax, the
// aggregation of every head, the bias, and ELU (hidden) or the heads'
// mean (last).
func (lr *layerRun) gat(b [2]int, rows []int32, csr *device.CSR, out []float32) {
	e, s := lr.e, lr.s
	n, K, P := len(rows), s.Heads, s.ProjWidth
	y := gatherRows(lr.local[(b[0]-e.lo)*P:(b[1]-e.lo)*P], rows, P)
	sv := device.Alloc[float32](e.dev, n*K)
	e.dev.HeadDot(sv, e.share(y, n, P), lr.param("att_src"), K)
	spec := device.GAT{Heads: K, Slope: gcn.GATSlope}
	nnz := csr.NNZ()
	alpha := device.Alloc[float32](e.dev, nnz*K)
	mx, sums := device.Alloc[float32](e.dev, n*K), device.Alloc[float32](e.dev, n*K)
	e.dev.GATScores(alpha, mx, csr, sv, lr.t, spec)
	e.dev.GATExpSum(alpha, sums, csr, mx, spec)
	e.dev.GATNormalize(alpha, device.Buffer[float32]{}, csr, alpha, sums, spec)
	o := device.Matrix(device.Alloc[float32](e.dev, n*P), n, P)
	e.dev.SpMMHeads(o, csr, alpha, device.Buffer[int32]{}, lr.fullM, K)
	ones := device.Alloc[float32](e.dev, n)
	e.dev.Fill(device.Matrix(ones, n, 1), 1)
	e.dev.HeadDotBackward(o, ones, lr.param("bias"), 1)
	if s.Hidden {
		e.dev.ELU(o, o)
		device.DownloadMat(e.dev, out, o)
		return
	}
	z := device.Matrix(device.Alloc[float32](e.dev, n*s.Out), n, s.Out)
	e.dev.HeadMean(z, o, K)
	device.DownloadMat(e.dev, out, z)
}

// selectRows returns a's rows (ascending indices), all of them when rows
// lists every row.
func selectRows(a *spmm.CSR, rows []int32) *spmm.CSR {
	if len(rows) == a.Rows {
		return a
	}
	out := &spmm.CSR{Rows: len(rows), Cols: a.Cols, RowPtr: make([]int64, len(rows)+1)}
	for i, r := range rows {
		out.RowPtr[i+1] = out.RowPtr[i] + a.RowPtr[r+1] - a.RowPtr[r]
	}
	nnz := out.RowPtr[len(rows)]
	out.ColIdx, out.Val = make([]int32, nnz), make([]float32, nnz)
	for i, r := range rows {
		p, q, o := a.RowPtr[r], a.RowPtr[r+1], out.RowPtr[i]
		copy(out.ColIdx[o:], a.ColIdx[p:q])
		copy(out.Val[o:], a.Val[p:q])
	}
	return out
}

// gatherRows copies rows of the row-major matrix x (width w); rows that
// are every row of x (ascending, so 0, 1, ...) are x itself, not a copy.
func gatherRows(x []float32, rows []int32, w int) []float32 {
	if len(rows)*w == len(x) {
		return x
	}
	out := make([]float32, len(rows)*w)
	for i, r := range rows {
		copy(out[i*w:(i+1)*w], x[int(r)*w:int(r+1)*w])
	}
	return out
}
