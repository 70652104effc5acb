package device

import "scalegnn/spmm"

// The Native device's bfloat16 operations: spmm.Native's bfloat16
// products, and the conversions as loops on the calling goroutine.

// SpMMBF16 computes dst = a·b for a bfloat16 b (spmm.Native.SpMMBF16).
func (d *Native) SpMMBF16(dst Mat, a *CSR, b MatBF16) {
	checkSpMMBF16(dst.view, a, b.view)
	d.be.SpMMBF16(dst.dense(), a.a, b.dense())
}

// SpMMBF16ToBF16 computes dst = a·b rounded once to bfloat16.
func (d *Native) SpMMBF16ToBF16(dst MatBF16, a *CSR, b MatBF16) {
	checkSpMMBF16(dst.view, a, b.view)
	d.be.SpMMBF16ToBF16(dst.dense(), a.a, b.dense())
}

// SpMMBF16Rows computes rows [r0, r0+dst.Rows()) of a·b: SpMMBF16 on a
// header over those rows of a (its offsets index a's whole arrays).
func (d *Native) SpMMBF16Rows(dst Mat, a *CSR, r0 int, b MatBF16) {
	checkSpMMBF16Rows(dst, a, r0, b)
	sub := rowsOf(a.a, r0, dst.rows)
	d.be.SpMMBF16(dst.dense(), &sub, b.dense())
}

// rowsOf is a header over rows [r0, r0+n) of the host CSR a, sharing its
// arrays: its row offsets start at a.RowPtr[r0], not 0, which the host
// kernels allow (they index ColIdx and Val by the offsets themselves).
func rowsOf(a *spmm.CSR, r0, n int) spmm.CSR {
	return spmm.CSR{Rows: n, Cols: a.Cols, RowPtr: a.RowPtr[r0 : r0+n+1], ColIdx: a.ColIdx, Val: a.Val}
}

// GemmBF16 computes dst = alpha·op(a)·op(b) + beta·dst for bfloat16 a, b.
func (d *Native) GemmBF16(tA, tB spmm.Op, alpha float32, a, b MatBF16, beta float32, dst Mat) {
	checkGemmBF16(tA, tB, a, b, dst)
	d.be.GemmBF16(tA, tB, alpha, a.dense(), b.dense(), beta, dst.dense())
}

// PackMatBF16 rounds src into dst.
func (d *Native) PackMatBF16(dst MatBF16, src Mat) {
	checkConvert("PackMatBF16", dst.view, src.view)
	for i := range dst.rows {
		o := dst.row(i)
		for j, v := range src.row(i) {
			o[j] = spmm.ToBF16(v)
		}
	}
}

// UnpackMatBF16 widens src into dst.
func (d *Native) UnpackMatBF16(dst Mat, src MatBF16) {
	checkConvert("UnpackMatBF16", dst.view, src.view)
	for i := range dst.rows {
		o := dst.row(i)
		for j, h := range src.row(i) {
			o[j] = spmm.FromBF16(h)
		}
	}
}

// ReLUBackwardBitsBF16 computes dst = grad where pos has the bit, else +0.
func (d *Native) ReLUBackwardBitsBF16(dst, grad MatBF16, pos Buffer[uint64]) {
	checkReLUBitsBF16(dst, grad, pos)
	selectBits(dst.view, grad.view, pos)
}
