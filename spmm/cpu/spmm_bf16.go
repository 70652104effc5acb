package cpu

// #include "kernels.h"
import "C"

import (
	"unsafe"

	"scalegnn/spmm"
)

// SpMMBF16 computes dst = a·b for a bfloat16 b, overwriting dst: the same
// kernel, split and checks as SpMM, with each element of b widened to
// float32 (exactly) as it is loaded and the sums kept in float32 in SpMM's
// order. The result therefore equals SpMM on b widened to float32, bit for
// bit, on every instruction set; what it saves is half of the bytes of b
// that the product gathers, the traffic that bounds it.
func (be *Backend) SpMMBF16(dst spmm.Dense, a *spmm.CSR, b spmm.DenseBF16) {
	spmm.CheckSpMMBF16(dst, a, b)
	be.spmmRanges(a, b.Cols, func(lo, hi int) int64 { return spmmBF16Rows(be.isa, dst, a, b, lo, hi) })
}

// SpMMBF16ToBF16 computes dst = a·b for a bfloat16 b into a bfloat16 dst:
// SpMMBF16's float32 sums, each rounded once to bfloat16 when it is
// complete (spmm.ToBF16), so it halves the bytes written as well.
func (be *Backend) SpMMBF16ToBF16(dst spmm.DenseBF16, a *spmm.CSR, b spmm.DenseBF16) {
	spmm.CheckSpMMBF16(dst, a, b)
	be.spmmRanges(a, b.Cols, func(lo, hi int) int64 { return spmmBF16Rows(be.isa, dst, a, b, lo, hi) })
}

// SpMMBF16ToBF16Masked computes dst = a·b for a bfloat16 b into a
// bfloat16 dst with each float32 sum masked and scaled before it is
// rounded (spmm.MaskedBF16; keep and pos rows of spmm.MaskWords(cols)
// words): the kernel writes a row's sums into a row buffer in L1 and its
// epilogue masks, scales and rounds them, so a dropout's and a ReLU's
// gradients cost no pass over the float32 result, which is never stored.
// The sums are SpMMBF16's, bit for bit.
func (be *Backend) SpMMBF16ToBF16Masked(dst spmm.DenseBF16, a *spmm.CSR, b spmm.DenseBF16, keep, pos []uint64, scale float32) {
	spmm.CheckSpMMBF16Masked(dst, a, b, keep, pos)
	be.spmmRanges(a, b.Cols, func(lo, hi int) int64 { return spmmBF16MaskedRows(be.isa, dst, a, b, keep, pos, scale, lo, hi) })
}

// SpMMRowsBF16Masked is SpMMRowsBF16 for SpMMBF16ToBF16Masked: rows
// [r0, r1), the caller having checked the shapes
// (spmm.CheckSpMMBF16Masked).
func SpMMRowsBF16Masked(dst spmm.DenseBF16, a *spmm.CSR, b spmm.DenseBF16, keep, pos []uint64, scale float32, r0, r1 int) {
	if r0 >= r1 || b.Cols == 0 {
		return
	}
	if r := spmmBF16MaskedRows(isaAuto, dst, a, b, keep, pos, scale, r0, r1); r >= 0 {
		badRow(r)
	}
}

func spmmBF16MaskedRows(x isa, dst spmm.DenseBF16, a *spmm.CSR, b spmm.DenseBF16, keep, pos []uint64, scale float32, r0, r1 int) int64 {
	col, val, nnzcap := csrArgs(a)
	var bp *C.uint16_t
	if len(b.Data) > 0 {
		bp = (*C.uint16_t)(unsafe.Pointer(&b.Data[0]))
	}
	r := C.scalegnn_spmm_bf16_masked_rows(C.int(x), (*C.uint16_t)(unsafe.Pointer(&dst.Data[0])), C.int64_t(dst.Stride),
		(*C.int64_t)(unsafe.Pointer(&a.RowPtr[0])), col, val,
		nnzcap, C.int64_t(a.Cols),
		bp, C.int64_t(b.Stride), C.int64_t(b.Cols),
		C.int64_t(r0), C.int64_t(r1),
		(*C.uint64_t)(unsafe.Pointer(&keep[0])), (*C.uint64_t)(unsafe.Pointer(&pos[0])),
		C.int64_t(spmm.MaskWords(b.Cols)), C.float(scale))
	return int64(r)
}

// SpMMRowsBF16 computes rows [r0, r1) of dst = a·b for a bfloat16 b, into
// a float32 (spmm.Dense) or bfloat16 (spmm.DenseBF16) dst, as SpMMRows
// does for float32: the caller has checked the shapes
// (spmm.CheckSpMMBF16) and 0 <= r0 <= r1 <= a.Rows; a malformed CSR row
// in the range panics with a spmm.ShapeError.
func SpMMRowsBF16[D spmm.Dense | spmm.DenseBF16](dst D, a *spmm.CSR, b spmm.DenseBF16, r0, r1 int) {
	if r0 >= r1 || b.Cols == 0 {
		return
	}
	if r := spmmBF16Rows(isaAuto, dst, a, b, r0, r1); r >= 0 {
		badRow(r)
	}
}

// spmmBF16Rows is spmmRows for a bfloat16 b, with dst float32 or bfloat16.
func spmmBF16Rows[D spmm.Dense | spmm.DenseBF16](x isa, dst D, a *spmm.CSR, b spmm.DenseBF16, r0, r1 int) int64 {
	var dp unsafe.Pointer
	var ldd int
	var outBF16 C.int
	switch d := any(dst).(type) {
	case spmm.Dense:
		dp, ldd = unsafe.Pointer(&d.Data[0]), d.Stride
	case spmm.DenseBF16:
		dp, ldd, outBF16 = unsafe.Pointer(&d.Data[0]), d.Stride, 1
	}
	col, val, nnzcap := csrArgs(a)
	var bp *C.uint16_t
	if len(b.Data) > 0 {
		bp = (*C.uint16_t)(unsafe.Pointer(&b.Data[0]))
	}
	r := C.scalegnn_spmm_bf16_rows(C.int(x), outBF16, dp, C.int64_t(ldd),
		(*C.int64_t)(unsafe.Pointer(&a.RowPtr[0])), col, val,
		nnzcap, C.int64_t(a.Cols),
		bp, C.int64_t(b.Stride), C.int64_t(b.Cols),
		C.int64_t(r0), C.int64_t(r1))
	return int64(r)
}
