package device

// The GAT operations of the Native device: gat_host.go's kernels over
// every row on one goroutine.

// HeadDot computes per-head dot products with att.
func (d *Native) HeadDot(s Buffer[float32], y Mat, att Buffer[float32], heads int) {
	checkHeadDot("HeadDot", s, y, att, heads)
	hostHeadDot(s.host, y, att.host, heads, 0, y.rows)
}

// HeadDotBackward accumulates HeadDot's gradient with respect to y.
func (d *Native) HeadDotBackward(dy Mat, ds, att Buffer[float32], heads int) {
	checkHeadDot("HeadDotBackward", ds, dy, att, heads)
	hostHeadDotBackward(dy, ds.host, att.host, heads, 0, dy.rows)
}

// HeadDotGrad computes HeadDot's gradient with respect to att.
func (d *Native) HeadDotGrad(datt, ds Buffer[float32], y Mat, heads int) {
	checkHeadDot("HeadDotGrad", ds, y, datt, heads)
	hostHeadDotGrad(datt.host, ds.host, y, heads)
}

// GATScores computes the edge scores and their row maxima.
func (d *Native) GATScores(e, mx Buffer[float32], a *CSR, s, t Buffer[float32], g GAT) {
	checkGATScores(e, mx, a, s, t, &g)
	hostGATScores(e.host, mx.host, a.a, s.host, t.host, &g, 0, a.Rows())
}

// GATExpSum exponentiates the shifted scores and sums each row.
func (d *Native) GATExpSum(e, sums Buffer[float32], a *CSR, mx Buffer[float32], g GAT) {
	checkGATExpSum(e, sums, a, mx, &g)
	hostGATExpSum(e.host, sums.host, a.a, mx.host, &g, 0, a.Rows())
}

// GATNormalize divides by the row sums and applies attention dropout.
func (d *Native) GATNormalize(alpha, drop Buffer[float32], a *CSR, e, sums Buffer[float32], g GAT) {
	checkGATNormalize(alpha, drop, a, e, sums, &g)
	hostGATNormalize(alpha.host, drop.host, a.a, e.host, sums.host, &g, 0, a.Rows())
}

// SpMMHeads aggregates with per-head edge weights.
func (d *Native) SpMMHeads(dst Mat, a *CSR, alpha Buffer[float32], perm Buffer[int32], b Mat, heads int) {
	checkSpMMHeads(dst, a, alpha, perm, b, heads)
	hostSpMMHeads(dst, a.a, alpha.host, permHost(perm), b, heads, 0, a.Rows())
}

// SDDMMHeads computes per-head dot products on the pattern of a.
func (d *Native) SDDMMHeads(dd Buffer[float32], a *CSR, x, y Mat, heads int) {
	checkSDDMMHeads(dd, a, x, y, heads)
	hostSDDMMHeads(dd.host, a.a, x, y, heads, 0, a.Rows())
}

// GATRowDot unmasks dalpha and computes the softmax backward's row dots.
func (d *Native) GATRowDot(r, dalpha Buffer[float32], a *CSR, alpha Buffer[float32], g GAT) {
	checkGATRowDot(r, dalpha, a, alpha, &g)
	hostGATRowDot(r.host, dalpha.host, a.a, alpha.host, &g, 0, a.Rows())
}

// GATLogitGrad computes the logits' gradient and its row sums.
func (d *Native) GATLogitGrad(dz, ds Buffer[float32], a *CSR, alpha, dalpha, r, s, t Buffer[float32], g GAT) {
	checkGATLogitGrad(dz, ds, a, alpha, dalpha, r, s, t, &g)
	hostGATLogitGrad(dz.host, ds.host, a.a, alpha.host, dalpha.host, r.host, s.host, t.host, &g, 0, a.Rows())
}

// EdgeSums sums per-edge values over each row.
func (d *Native) EdgeSums(dst Buffer[float32], a *CSR, vals Buffer[float32], perm Buffer[int32], heads int) {
	checkEdgeSums(dst, a, vals, perm, heads)
	hostEdgeSums(dst.host, a.a, vals.host, permHost(perm), heads, 0, a.Rows())
}

// ELU applies the exponential linear unit.
func (d *Native) ELU(dst, a Mat) {
	checkSame("ELU", dst, a)
	hostELU(dst, a, 0, dst.rows)
}

// ELUBackward computes ELU's gradient from its output.
func (d *Native) ELUBackward(dst, grad, out Mat) {
	checkSame("ELUBackward", dst, grad, out)
	hostELUBackward(dst, grad, out, 0, dst.rows)
}

// HeadMean averages the heads.
func (d *Native) HeadMean(dst, src Mat, heads int) {
	checkHeadMean("HeadMean", dst, src, heads)
	hostHeadMean(dst, src, heads, 0, dst.rows)
}

// HeadMeanBackward spreads the gradient over the heads.
func (d *Native) HeadMeanBackward(dst, grad Mat, heads int) {
	checkHeadMean("HeadMeanBackward", grad, dst, heads)
	hostHeadMeanBackward(dst, grad, heads, 0, dst.rows)
}
