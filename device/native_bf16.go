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

// SpMMBF16ToBF16Masked computes dst = a·b with each sum masked and
// rounded (spmm.MaskedBF16).
func (d *Native) SpMMBF16ToBF16Masked(dst MatBF16, a *CSR, b MatBF16, keep, pos Buffer[uint64], p float64) {
	checkSpMMBF16Masked(dst, a, b, keep, pos, p)
	if dst.rows == 0 || dst.cols == 0 {
		return
	}
	d.be.SpMMBF16ToBF16Masked(dst.dense(), a.a, b.dense(), keep.host, pos.host, dropScale(p)[1])
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

// GatherRowsBF16 sets row i of dst to row idx[i] of src.
func (d *Native) GatherRowsBF16(dst, src MatBF16, idx Buffer[int32]) {
	checkGatherViews("GatherRowsBF16", dst.view, src.view, idx, false)
	gatherRows(dst.view, src.view, idx.host)
}

// gatherRows copies row idx[i] of src to row i of dst, on the host.
func gatherRows[T Elem](dst, src view[T], idx []int32) {
	for i, r := range idx {
		copy(dst.row(i), src.row(int(r)))
	}
}
