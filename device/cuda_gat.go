//go:build cgo

package device

// The GAT operations of the CUDA device, on the kernels at the end of
// cuda_kernels.cu: row reductions a warp per row when the heads divide
// 32 (lanes over the row's entries, combined in a fixed tree), else a
// thread per (row, head) over the row's entries in order; per-edge work
// a warp per row, SpMMHeads a warp per row with lanes over the columns.
// The thread-per-(row, head) sums run in the host's order (gat_host.go),
// so those results are Native's bit for bit except where exp and expm1
// enter; the warp sums and HeadDotGrad (chunked) are deterministic in
// another fixed order. The warp kernels replaced the thread ones for
// R-MAT's hub rows: a row of 25,000 entries (R-MAT scale 18's largest)
// was one thread's serial loop. The
// permutations and vertex ids are trusted, as the CSR's indices are once
// uploaded: perm comes from spmm.TransposePerm, and the vertex ids only
// feed the counter hash.

// gatArgs are the dropout arguments of GATNormalize and GATRowDot.
func gatArgs(g *GAT) (rowVerts, colVerts, seed, site, step, th, scale, on uint64) {
	if g.P <= 0 {
		return 0, 0, 0, 0, 0, 0, 0, 0
	}
	return argBuf(g.RowVerts), argBuf(g.ColVerts), g.Seed, siteBits(g.Site), uint64(g.Step), dropThreshold(g.P),
		argF32(dropScale(g.P)[1]), 1
}

// permArg is perm's address, or 0 (no permutation) when it is empty:
// an empty view of a buffer still has an address.
func permArg(perm Buffer[int32]) uint64 {
	if perm.Len() == 0 {
		return 0
	}
	return argBuf(perm)
}

// rowReduce launches a row reduction: the warp-per-row kernel w when the
// heads divide a warp (and the device has not been told to keep to the
// thread-per-(row, head) kernels, which the emulator test does: it cannot
// run warp shuffles), else the thread-per-(row, head) kernel t.
func (d *CUDA) rowReduce(t, w kern, rows, heads int, args ...uint64) {
	if 32%heads == 0 && !d.gatRowThreads {
		d.runWarpRows(w, rows, args...)
		return
	}
	d.run1(t, rows*heads, args...)
}

// runWarpRows launches a kernel with a warp per row (blocks of 32×8).
func (d *CUDA) runWarpRows(k kern, rows int, args ...uint64) {
	if rows == 0 {
		return
	}
	d.launch(k, clampGrid(ceilDiv(rows, 8), 1<<20), 1, 32, 8, args...)
}

// HeadDot computes per-head dot products with att.
func (d *CUDA) HeadDot(s Buffer[float32], y Mat, att Buffer[float32], heads int) {
	checkHeadDot("HeadDot", s, y, att, heads)
	d.run1(kHeadDot, y.rows*heads, argBuf(s), argMat(y), argInt(y.strid), argBuf(att), argInt(heads), argInt(y.cols/heads),
		argInt(y.rows))
}

// HeadDotBackward accumulates HeadDot's gradient with respect to y.
func (d *CUDA) HeadDotBackward(dy Mat, ds, att Buffer[float32], heads int) {
	checkHeadDot("HeadDotBackward", ds, dy, att, heads)
	d.run2(kHeadDotBackward, dy.rows, dy.cols, argMat(dy), argInt(dy.strid), argBuf(ds), argBuf(att), argInt(heads),
		argInt(dy.cols/heads), argInt(dy.rows), argInt(dy.cols))
}

// HeadDotGrad computes HeadDot's gradient with respect to att: partial
// sums over chunks of gatChunk rows, then their sum chunk by chunk, in
// scratch memory the device keeps (and grows) for it.
func (d *CUDA) HeadDotGrad(datt, ds Buffer[float32], y Mat, heads int) {
	checkHeadDot("HeadDotGrad", ds, y, datt, heads)
	if y.cols == 0 {
		return
	}
	chunks := ceilDiv(y.rows, gatChunk)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gatPart.Len() < chunks*y.cols {
		d.gatPart = Alloc[float32](d, chunks*y.cols)
	}
	d.run2(kHeadDotGradPart, chunks, y.cols, argBuf(d.gatPart), argBuf(ds), argMat(y), argInt(y.strid), argInt(heads),
		argInt(y.cols/heads), argInt(y.rows), argInt(chunks), argInt(y.cols))
	d.run1(kHeadDotGradSum, y.cols, argBuf(datt), argBuf(d.gatPart), argInt(chunks), argInt(y.cols))
}

// gatChunk is GAT_CHUNK of cuda_kernels.cu.
const gatChunk = 256

// GATScores computes the edge scores and their row maxima.
func (d *CUDA) GATScores(e, mx Buffer[float32], a *CSR, s, t Buffer[float32], g GAT) {
	checkGATScores(e, mx, a, s, t, &g)
	c := a.g
	d.rowReduce(kGATScores, kGATScoresW, c.rows, g.Heads, argBuf(e), argBuf(mx), argBuf(c.rowPtr), argBuf(c.colIdx), argBuf(s), argBuf(t),
		argInt(g.Heads), argF32(g.Slope), argInt(c.rows))
}

// GATExpSum exponentiates the shifted scores and sums each row.
func (d *CUDA) GATExpSum(e, sums Buffer[float32], a *CSR, mx Buffer[float32], g GAT) {
	checkGATExpSum(e, sums, a, mx, &g)
	c := a.g
	d.rowReduce(kGATExpSum, kGATExpSumW, c.rows, g.Heads, argBuf(e), argBuf(sums), argBuf(c.rowPtr), argBuf(mx), argInt(g.Heads), argInt(c.rows))
}

// GATNormalize divides by the row sums and applies attention dropout.
func (d *CUDA) GATNormalize(alpha, drop Buffer[float32], a *CSR, e, sums Buffer[float32], g GAT) {
	checkGATNormalize(alpha, drop, a, e, sums, &g)
	c := a.g
	rv, cv, seed, site, step, th, scale, on := gatArgs(&g)
	dr := uint64(0)
	if on != 0 {
		dr = argBuf(drop)
	}
	d.runWarpRows(kGATNormalize, c.rows, argBuf(alpha), dr, argBuf(c.rowPtr), argBuf(c.colIdx), argBuf(e), argBuf(sums),
		argInt(g.Heads), rv, cv, seed, site, step, th, scale, on, argInt(c.rows))
}

// SpMMHeads aggregates with per-head edge weights.
func (d *CUDA) SpMMHeads(dst Mat, a *CSR, alpha Buffer[float32], perm Buffer[int32], b Mat, heads int) {
	checkSpMMHeads(dst, a, alpha, perm, b, heads)
	if dst.cols == 0 {
		return
	}
	c := a.g
	d.runWarpRows(kSpMMHeads, c.rows, argMat(dst), argInt(dst.strid), argBuf(c.rowPtr), argBuf(c.colIdx), argBuf(alpha),
		permArg(perm), argMat(b), argInt(b.strid), argInt(heads), argInt(b.cols/heads), argInt(c.rows), argInt(dst.cols))
}

// SDDMMHeads computes per-head dot products on the pattern of a.
func (d *CUDA) SDDMMHeads(dd Buffer[float32], a *CSR, x, y Mat, heads int) {
	checkSDDMMHeads(dd, a, x, y, heads)
	c := a.g
	d.runWarpRows(kSDDMMHeads, c.rows, argBuf(dd), argBuf(c.rowPtr), argBuf(c.colIdx), argMat(x), argInt(x.strid), argMat(y),
		argInt(y.strid), argInt(heads), argInt(x.cols/heads), argInt(c.rows))
}

// GATRowDot unmasks dalpha and computes the softmax backward's row dots.
func (d *CUDA) GATRowDot(r, dalpha Buffer[float32], a *CSR, alpha Buffer[float32], g GAT) {
	checkGATRowDot(r, dalpha, a, alpha, &g)
	c := a.g
	rv, cv, seed, site, step, th, scale, on := gatArgs(&g)
	d.rowReduce(kGATRowDot, kGATRowDotW, c.rows, g.Heads, argBuf(r), argBuf(dalpha), argBuf(c.rowPtr), argBuf(c.colIdx), argBuf(alpha),
		argInt(g.Heads), rv, cv, seed, site, step, th, scale, on, argInt(c.rows))
}

// GATLogitGrad computes the logits' gradient and its row sums.
func (d *CUDA) GATLogitGrad(dz, ds Buffer[float32], a *CSR, alpha, dalpha, r, s, t Buffer[float32], g GAT) {
	checkGATLogitGrad(dz, ds, a, alpha, dalpha, r, s, t, &g)
	c := a.g
	d.rowReduce(kGATLogitGrad, kGATLogitGradW, c.rows, g.Heads, argBuf(dz), argBuf(ds), argBuf(c.rowPtr), argBuf(c.colIdx), argBuf(alpha),
		argBuf(dalpha), argBuf(r), argBuf(s), argBuf(t), argInt(g.Heads), argF32(g.Slope), argInt(c.rows))
}

// EdgeSums sums per-edge values over each row.
func (d *CUDA) EdgeSums(dst Buffer[float32], a *CSR, vals Buffer[float32], perm Buffer[int32], heads int) {
	checkEdgeSums(dst, a, vals, perm, heads)
	c := a.g
	d.rowReduce(kEdgeSums, kEdgeSumsW, c.rows, heads, argBuf(dst), argBuf(c.rowPtr), argBuf(vals), permArg(perm), argInt(heads), argInt(c.rows))
}

// ELU applies the exponential linear unit.
func (d *CUDA) ELU(dst, a Mat) {
	checkSame("ELU", dst, a)
	d.runFlat(kELU, dst.rows, dst.cols, []Mat{dst, a}, argMat(dst), argInt(dst.strid), argMat(a), argInt(a.strid),
		argInt(dst.rows), argInt(dst.cols))
}

// ELUBackward computes ELU's gradient from its output.
func (d *CUDA) ELUBackward(dst, grad, out Mat) {
	checkSame("ELUBackward", dst, grad, out)
	d.runFlat(kELUBackward, dst.rows, dst.cols, []Mat{dst, grad, out}, argMat(dst), argInt(dst.strid), argMat(grad),
		argInt(grad.strid), argMat(out), argInt(out.strid), argInt(dst.rows), argInt(dst.cols))
}

// HeadMean averages the heads.
func (d *CUDA) HeadMean(dst, src Mat, heads int) {
	checkHeadMean("HeadMean", dst, src, heads)
	d.run2(kHeadMean, dst.rows, dst.cols, argMat(dst), argInt(dst.strid), argMat(src), argInt(src.strid), argInt(heads),
		argF32(1/float32(heads)), argInt(dst.rows), argInt(dst.cols))
}

// HeadMeanBackward spreads the gradient over the heads.
func (d *CUDA) HeadMeanBackward(dst, grad Mat, heads int) {
	checkHeadMean("HeadMeanBackward", grad, dst, heads)
	d.run2(kHeadMeanBackward, dst.rows, dst.cols, argMat(dst), argInt(dst.strid), argMat(grad), argInt(grad.strid),
		argInt(grad.cols), argF32(1/float32(heads)), argInt(dst.rows), argInt(dst.cols))
}
