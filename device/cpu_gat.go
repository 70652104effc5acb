//go:build cgo

package device

import "scalegnn/spmm"

// The GAT operations of the CPU device: gat_host.go's row kernels on the
// device's worker pool. Edge operations split the rows into the CSR's
// nonzero-balanced chunks (UploadCSR's bounds); row operations split
// rows evenly. HeadDotGrad, a sum over rows, runs on one thread so that
// its sums are in row order.

// gatOp codes of gatJob.
const (
	gatHeadDot = iota
	gatHeadDotBackward
	gatScores
	gatExpSum
	gatNormalize
	gatSpMMHeads
	gatSDDMMHeads
	gatRowDot
	gatLogitGrad
	gatEdgeSums
	gatELU
	gatELUBackward
	gatHeadMean
	gatHeadMeanBackward
)

// gatJob is a GAT operation's arguments, a field of the device so that
// handing it to the pool allocates nothing.
type gatJob struct {
	op             int
	g              GAT
	heads          int
	csr            *spmm.CSR
	bounds         []int // chunk boundaries in rows; nil: the range is rows
	m1, m2, m3     Mat
	v1, v2, v3, v4 []float32
	v5, v6, v7     []float32
	perm           []int32
}

func (j *gatJob) rows(lo, hi int) (int, int) {
	if j.bounds == nil {
		return lo, hi
	}
	return j.bounds[lo], j.bounds[hi]
}

func (j *gatJob) run(lo, hi int) {
	r0, r1 := j.rows(lo, hi)
	switch j.op {
	case gatHeadDot:
		hostHeadDot(j.v1, j.m1, j.v2, j.heads, r0, r1)
	case gatHeadDotBackward:
		hostHeadDotBackward(j.m1, j.v1, j.v2, j.heads, r0, r1)
	case gatScores:
		hostGATScores(j.v1, j.v2, j.csr, j.v3, j.v4, &j.g, r0, r1)
	case gatExpSum:
		hostGATExpSum(j.v1, j.v2, j.csr, j.v3, &j.g, r0, r1)
	case gatNormalize:
		hostGATNormalize(j.v1, j.v2, j.csr, j.v3, j.v4, &j.g, r0, r1)
	case gatSpMMHeads:
		hostSpMMHeads(j.m1, j.csr, j.v1, j.perm, j.m2, j.heads, r0, r1)
	case gatSDDMMHeads:
		hostSDDMMHeads(j.v1, j.csr, j.m1, j.m2, j.heads, r0, r1)
	case gatRowDot:
		hostGATRowDot(j.v1, j.v2, j.csr, j.v3, &j.g, r0, r1)
	case gatLogitGrad:
		hostGATLogitGrad(j.v1, j.v2, j.csr, j.v3, j.v4, j.v5, j.v6, j.v7, &j.g, r0, r1)
	case gatEdgeSums:
		hostEdgeSums(j.v1, j.csr, j.v2, j.perm, j.heads, r0, r1)
	case gatELU:
		hostELU(j.m1, j.m2, r0, r1)
	case gatELUBackward:
		hostELUBackward(j.m1, j.m2, j.m3, r0, r1)
	case gatHeadMean:
		hostHeadMean(j.m1, j.m2, j.heads, r0, r1)
	case gatHeadMeanBackward:
		hostHeadMeanBackward(j.m1, j.m2, j.heads, r0, r1)
	}
}

// startGAT locks the device and returns its GAT job, cleared, with op set.
func (d *CPU) startGAT(op int) *gatJob {
	d.mu.Lock()
	j := &d.gjob
	*j = gatJob{op: op}
	return j
}

// finishGAT runs j over rows rows (work: elements touched), or over a's
// chunks when a is set.
func (d *CPU) finishGAT(j *gatJob, a *CSR, rows, work int) {
	total := rows
	if a != nil {
		j.csr = a.a
		j.bounds = a.bounds
		if j.bounds == nil { // uploaded by another kind of device
			j.bounds = []int{0, a.a.Rows}
		}
		total = len(j.bounds) - 1
	}
	d.pool.run(j, total, work)
	*j = gatJob{}
	d.mu.Unlock()
}

// HeadDot computes per-head dot products with att.
func (d *CPU) HeadDot(s Buffer[float32], y Mat, att Buffer[float32], heads int) {
	checkHeadDot("HeadDot", s, y, att, heads)
	j := d.startGAT(gatHeadDot)
	j.v1, j.m1, j.v2, j.heads = s.host, y, att.host, heads
	d.finishGAT(j, nil, y.rows, y.rows*y.cols)
}

// HeadDotBackward accumulates HeadDot's gradient with respect to y.
func (d *CPU) HeadDotBackward(dy Mat, ds, att Buffer[float32], heads int) {
	checkHeadDot("HeadDotBackward", ds, dy, att, heads)
	j := d.startGAT(gatHeadDotBackward)
	j.m1, j.v1, j.v2, j.heads = dy, ds.host, att.host, heads
	d.finishGAT(j, nil, dy.rows, dy.rows*dy.cols)
}

// HeadDotGrad computes HeadDot's gradient with respect to att, on one
// thread (a sum over rows in order).
func (d *CPU) HeadDotGrad(datt, ds Buffer[float32], y Mat, heads int) {
	checkHeadDot("HeadDotGrad", ds, y, datt, heads)
	hostHeadDotGrad(datt.host, ds.host, y, heads)
}

// GATScores computes the edge scores and their row maxima.
func (d *CPU) GATScores(e, mx Buffer[float32], a *CSR, s, t Buffer[float32], g GAT) {
	checkGATScores(e, mx, a, s, t, &g)
	j := d.startGAT(gatScores)
	j.v1, j.v2, j.v3, j.v4, j.g = e.host, mx.host, s.host, t.host, g
	d.finishGAT(j, a, 0, a.NNZ()*g.Heads)
}

// GATExpSum exponentiates the shifted scores and sums each row.
func (d *CPU) GATExpSum(e, sums Buffer[float32], a *CSR, mx Buffer[float32], g GAT) {
	checkGATExpSum(e, sums, a, mx, &g)
	j := d.startGAT(gatExpSum)
	j.v1, j.v2, j.v3, j.g = e.host, sums.host, mx.host, g
	d.finishGAT(j, a, 0, 8*a.NNZ()*g.Heads)
}

// GATNormalize divides by the row sums and applies attention dropout.
func (d *CPU) GATNormalize(alpha, drop Buffer[float32], a *CSR, e, sums Buffer[float32], g GAT) {
	checkGATNormalize(alpha, drop, a, e, sums, &g)
	j := d.startGAT(gatNormalize)
	j.v1, j.v2, j.v3, j.v4, j.g = alpha.host, drop.host, e.host, sums.host, g
	d.finishGAT(j, a, 0, 2*a.NNZ()*g.Heads)
}

// SpMMHeads aggregates with per-head edge weights.
func (d *CPU) SpMMHeads(dst Mat, a *CSR, alpha Buffer[float32], perm Buffer[int32], b Mat, heads int) {
	checkSpMMHeads(dst, a, alpha, perm, b, heads)
	j := d.startGAT(gatSpMMHeads)
	j.m1, j.v1, j.perm, j.m2, j.heads = dst, alpha.host, permHost(perm), b, heads
	d.finishGAT(j, a, 0, a.NNZ()*b.cols)
}

// SDDMMHeads computes per-head dot products on the pattern of a.
func (d *CPU) SDDMMHeads(dd Buffer[float32], a *CSR, x, y Mat, heads int) {
	checkSDDMMHeads(dd, a, x, y, heads)
	j := d.startGAT(gatSDDMMHeads)
	j.v1, j.m1, j.m2, j.heads = dd.host, x, y, heads
	d.finishGAT(j, a, 0, a.NNZ()*x.cols)
}

// GATRowDot unmasks dalpha and computes the softmax backward's row dots.
func (d *CPU) GATRowDot(r, dalpha Buffer[float32], a *CSR, alpha Buffer[float32], g GAT) {
	checkGATRowDot(r, dalpha, a, alpha, &g)
	j := d.startGAT(gatRowDot)
	j.v1, j.v2, j.v3, j.g = r.host, dalpha.host, alpha.host, g
	d.finishGAT(j, a, 0, 2*a.NNZ()*g.Heads)
}

// GATLogitGrad computes the logits' gradient and its row sums.
func (d *CPU) GATLogitGrad(dz, ds Buffer[float32], a *CSR, alpha, dalpha, r, s, t Buffer[float32], g GAT) {
	checkGATLogitGrad(dz, ds, a, alpha, dalpha, r, s, t, &g)
	j := d.startGAT(gatLogitGrad)
	j.v1, j.v2, j.v3, j.v4, j.v5, j.v6, j.v7, j.g = dz.host, ds.host, alpha.host, dalpha.host, r.host, s.host, t.host, g
	d.finishGAT(j, a, 0, 2*a.NNZ()*g.Heads)
}

// EdgeSums sums per-edge values over each row.
func (d *CPU) EdgeSums(dst Buffer[float32], a *CSR, vals Buffer[float32], perm Buffer[int32], heads int) {
	checkEdgeSums(dst, a, vals, perm, heads)
	j := d.startGAT(gatEdgeSums)
	j.v1, j.v2, j.perm, j.heads = dst.host, vals.host, permHost(perm), heads
	d.finishGAT(j, a, 0, a.NNZ()*heads)
}

// ELU applies the exponential linear unit.
func (d *CPU) ELU(dst, a Mat) {
	checkSame("ELU", dst, a)
	j := d.startGAT(gatELU)
	j.m1, j.m2 = dst, a
	d.finishGAT(j, nil, dst.rows, 8*dst.rows*dst.cols)
}

// ELUBackward computes ELU's gradient from its output.
func (d *CPU) ELUBackward(dst, grad, out Mat) {
	checkSame("ELUBackward", dst, grad, out)
	j := d.startGAT(gatELUBackward)
	j.m1, j.m2, j.m3 = dst, grad, out
	d.finishGAT(j, nil, dst.rows, dst.rows*dst.cols)
}

// HeadMean averages the heads.
func (d *CPU) HeadMean(dst, src Mat, heads int) {
	checkHeadMean("HeadMean", dst, src, heads)
	j := d.startGAT(gatHeadMean)
	j.m1, j.m2, j.heads = dst, src, heads
	d.finishGAT(j, nil, dst.rows, src.rows*src.cols)
}

// HeadMeanBackward spreads the gradient over the heads.
func (d *CPU) HeadMeanBackward(dst, grad Mat, heads int) {
	checkHeadMean("HeadMeanBackward", grad, dst, heads)
	j := d.startGAT(gatHeadMeanBackward)
	j.m1, j.m2, j.heads = dst, grad, heads
	d.finishGAT(j, nil, dst.rows, dst.rows*dst.cols)
}
