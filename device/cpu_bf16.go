//go:build cgo

package device

import (
	"scalegnn/spmm"
	"scalegnn/spmm/cpu"
)

// The CPU device's bfloat16 operations: spmm/cpu's bfloat16 row kernel
// and GEMM blocks (cpu.SpMMRowsBF16, cpu.PlanGemmBF16, cpu.GemmPartBF16)
// and the C conversions, on the device's worker pool as the float32 ones
// run: no allocation, no goroutine per call.

// SpMMBF16 computes dst = a·b for a bfloat16 b: the SpMM row kernel
// widening b as it loads it, so the sums are SpMM's (and Native's) bit
// for bit.
func (d *CPU) SpMMBF16(dst Mat, a *CSR, b MatBF16) {
	checkSpMMBF16(dst.view, a, b.view)
	if j := d.startSpMM(opSpMMBF16, dst.rows, dst.cols, a); j != nil {
		j.dd, j.bh = dst.dense(), b.dense()
		d.finishSpMM(j, a, dst.cols)
	}
}

// SpMMBF16ToBF16 computes dst = a·b rounded once to bfloat16.
func (d *CPU) SpMMBF16ToBF16(dst MatBF16, a *CSR, b MatBF16) {
	checkSpMMBF16(dst.view, a, b.view)
	if j := d.startSpMM(opSpMMBF16ToBF16, dst.rows, dst.cols, a); j != nil {
		j.dh, j.bh = dst.dense(), b.dense()
		d.finishSpMM(j, a, dst.cols)
	}
}

// SpMMBF16ToBF16Masked computes dst = a·b with each sum masked and
// rounded (spmm.MaskedBF16) by the SpMM kernel's epilogue, on the CSR's
// chunks as SpMMBF16.
func (d *CPU) SpMMBF16ToBF16Masked(dst MatBF16, a *CSR, b MatBF16, keep, pos Buffer[uint64], p float64) {
	checkSpMMBF16Masked(dst, a, b, keep, pos, p)
	if j := d.startSpMM(opSpMMBF16Masked, dst.rows, dst.cols, a); j != nil {
		j.dh, j.bh = dst.dense(), b.dense()
		j.drop.Keep, j.pos, j.drop.Scale = keep.host, pos.host, dropScale(p)[1]
		d.finishSpMM(j, a, dst.cols)
	}
}

// GemmBF16 computes dst = alpha·op(a)·op(b) + beta·dst for bfloat16 a, b:
// cblas_sbgemm where the BLAS has it, else widening to sgemm in chunks
// (cpu.GemmBF16Kernel says which), in blocks on the device's threads.
func (d *CPU) GemmBF16(tA, tB spmm.Op, alpha float32, a, b MatBF16, beta float32, dst Mat) {
	checkGemmBF16(tA, tB, a, b, dst)
	ah, bh, dd := a.dense(), b.dense(), dst.dense()
	pl := cpu.PlanGemmBF16(tA, tB, ah, bh, dd, d.pool.threads())
	if pl.Parts == 0 {
		return
	}
	j := d.start(opGemmBF16)
	j.ah, j.bh, j.dd = ah, bh, dd
	d.runGemm(j, pl, tA, tB, alpha, beta)
}

// PackMatBF16 rounds src into dst, rows split over the threads.
func (d *CPU) PackMatBF16(dst MatBF16, src Mat) {
	checkConvert("PackMatBF16", dst.view, src.view)
	j := d.start(opPackMat)
	j.u16, j.ldd, j.a, j.lda, j.rows, j.cols = dst.data(), dst.strid, src.data(), src.strid, dst.rows, dst.cols
	d.runRows(j)
}

// UnpackMatBF16 widens src into dst, rows split over the threads.
func (d *CPU) UnpackMatBF16(dst Mat, src MatBF16) {
	checkConvert("UnpackMatBF16", dst.view, src.view)
	j := d.start(opUnpackMat)
	j.d, j.ldd, j.u16, j.lda, j.rows, j.cols = dst.data(), dst.strid, src.data(), src.strid, dst.rows, dst.cols
	d.runRows(j)
}

// ReLUBackwardBitsBF16 computes dst = grad where pos has the bit, else
// +0, rows split over the threads.
func (d *CPU) ReLUBackwardBitsBF16(dst, grad MatBF16, pos Buffer[uint64]) {
	checkReLUBitsBF16(dst, grad, pos)
	j := d.start(opReLUBackwardBitsBF16)
	j.u16, j.ldd, j.u16b, j.lda, j.rows, j.cols = dst.data(), dst.strid, grad.data(), grad.strid, dst.rows, dst.cols
	j.drop.Keep, j.drop.WordsPerRow = pos.host, maskWords(dst.cols)
	d.runRows(j)
}

// GatherRowsBF16 sets row i of dst to row idx[i] of src: a copy, on the
// calling goroutine (a batch's rows are a small part of an epoch).
func (d *CPU) GatherRowsBF16(dst, src MatBF16, idx Buffer[int32]) {
	checkGatherViews("GatherRowsBF16", dst.view, src.view, idx, false)
	gatherRows(dst.view, src.view, idx.host)
}
