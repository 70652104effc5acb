package cpu

// #include "kernels.h"
import "C"

import (
	"sync"
	"unsafe"

	"scalegnn/spmm"
)

// The kernels that can compute GemmBF16's blocks, in order of preference.
const (
	bf16AMX    = iota // ours, AMX tiles (gemm_bf16.c)
	bf16DPBF16        // ours, AVX512_BF16's vdpbf16ps (gemm_bf16.c)
	bf16SBGEMM        // the BLAS's cblas_sbgemm
	bf16Widen         // widen to float32, sgemm
)

// bf16Path is the kernel GemmBF16 runs: the first of bf16AMX (the CPU has
// AMX-BF16 and Linux lets the process use it), bf16DPBF16 (the CPU has
// avx512_bf16 and no AMX), bf16SBGEMM (the linked BLAS exports
// cblas_sbgemm) and bf16Widen. On a CPU with AMX, vdpbf16ps issues at
// half the rate of a float32 FMA and the kernel was slower than sgemm
// (docs/bf16.md), so where Linux refuses AMX it is not used. Tests set
// bf16Path to run the others where they exist.
var bf16Path = func() int {
	switch {
	case amxState == 1:
		return bf16AMX
	case amxState == 0 && dpbf16Available():
		return bf16DPBF16
	case sbgemmAvailable():
		return bf16SBGEMM
	}
	return bf16Widen
}()

// amxState is scalegnn_gemm_amx_enable's answer, asked once when the
// package loads: 1 AMX tiles usable, -1 the CPU has them but Linux
// refused, 0 none; amxAvailable is amxState == 1.
var (
	amxState     = int(C.scalegnn_gemm_amx_enable())
	amxAvailable = amxState == 1
)

// dpbf16Available reports whether the CPU runs the vdpbf16ps kernel
// (avx512_bf16 with AVX-512 F, BW and VL; never off amd64).
func dpbf16Available() bool { return C.scalegnn_gemm_bf16_available() != 0 }

// GemmBF16Kernel names what computes GemmBF16 in this build and on this
// CPU, for logs: "amx" or "avx512bf16" (our kernels, AMX tiles or
// vdpbf16ps), "cblas_sbgemm" or "widen+sgemm".
func GemmBF16Kernel() string {
	switch bf16Path {
	case bf16AMX:
		return "amx"
	case bf16DPBF16:
		return "avx512bf16"
	case bf16SBGEMM:
		return "cblas_sbgemm"
	}
	return "widen+sgemm"
}

// GemmBF16 computes dst = alpha·op(a)·op(b) + beta·dst for bfloat16 a and
// b, with float32 accumulation and a float32 dst. As in BLAS, beta == 0
// overwrites dst without reading it. The product is planned and split
// over the backend's goroutines as Gemm's is (PlanGemmBF16, GemmPartBF16);
// each block runs cblas_sbgemm where the BLAS exports it (OpenBLAS built
// with BUILD_BFLOAT16) and otherwise widens its operands to float32 in
// cache-sized chunks and runs sgemm on them: a bfloat16 widens exactly, so
// both compute the product of the same values, in float32.
func (be *Backend) GemmBF16(tA, tB spmm.Op, alpha float32, a, b spmm.DenseBF16, beta float32, dst spmm.Dense) {
	pl := PlanGemmBF16(tA, tB, a, b, dst, be.workers())
	switch {
	case pl.Parts == 0:
	case pl.Parts == 1:
		GemmPartBF16(pl, 0, tA, tB, alpha, a, b, beta, dst)
	default:
		parallel(pl.Parts, func(p int) { GemmPartBF16(pl, p, tA, tB, alpha, a, b, beta, dst) })
	}
}

// PlanGemmBF16 is PlanGemm for bfloat16 operands (never Sparse).
func PlanGemmBF16(tA, tB spmm.Op, a, b spmm.DenseBF16, dst spmm.Dense, workers int) GemmPlan {
	m, n, k := spmm.CheckGemmBF16(tA, tB, a, b, dst)
	return planGemm(m, n, k, a.Stride, b.Stride, dst.Stride, workers, func() bool { return false })
}

// GemmPartBF16 computes block part of a product planned by PlanGemmBF16,
// as GemmPart does for float32.
func GemmPartBF16(pl GemmPlan, part int, tA, tB spmm.Op, alpha float32, a, b spmm.DenseBF16, beta float32, dst spmm.Dense) {
	if pl.K == 0 || alpha == 0 {
		if part == 0 {
			scale(dst, beta)
		}
		return
	}
	w := pl.window(part, tA, tB, a.Rows, a.Cols, b.Rows, b.Cols)
	ap := spmm.SliceBF16(a, w.a[0], w.a[1], w.a[2], w.a[3])
	bp := spmm.SliceBF16(b, w.b[0], w.b[1], w.b[2], w.b[3])
	dp := spmm.Slice(dst, w.d[0], w.d[1], w.d[2], w.d[3])
	switch bf16Path {
	case bf16AMX, bf16DPBF16:
		gemmOwnBF16(bf16Path == bf16AMX, tA, tB, alpha, ap, bp, beta, dp, w.m, w.n, pl.K)
	case bf16SBGEMM:
		sbgemm(tA, tB, alpha, ap, bp, beta, dp, w.m, w.n, pl.K)
	default:
		gemmWidened(tA, tB, alpha, ap, bp, beta, dp, w.m, w.n, pl.K)
	}
}

// ownBF16Pool holds the packing scratch of gemmOwnBF16, one *[]uint32 per
// block in flight.
var ownBF16Pool sync.Pool

// gemmOwnBF16 computes dst = alpha·op(a)·op(b) + beta·dst (m, n, k > 0)
// with a kernel of gemm_bf16.c: AMX tiles or vdpbf16ps.
func gemmOwnBF16(amx bool, tA, tB spmm.Op, alpha float32, a, b spmm.DenseBF16, beta float32, dst spmm.Dense, m, n, k int) {
	need := int(C.scalegnn_gemm_bf16_words(C.int64_t(n), C.int64_t(k)))
	bufp, _ := ownBF16Pool.Get().(*[]uint32)
	if bufp == nil || cap(*bufp) < need {
		s := make([]uint32, need)
		bufp = &s
	}
	defer ownBF16Pool.Put(bufp)
	pa, pb := (*C.uint16_t)(unsafe.Pointer(&a.Data[0])), (*C.uint16_t)(unsafe.Pointer(&b.Data[0]))
	pd, pw := (*C.float)(unsafe.Pointer(&dst.Data[0])), (*C.uint32_t)(unsafe.Pointer(&(*bufp)[0]))
	if amx {
		C.scalegnn_gemm_amx(cTrans(tA), cTrans(tB), C.int64_t(m), C.int64_t(n), C.int64_t(k), C.float(alpha),
			pa, C.int64_t(a.Stride), pb, C.int64_t(b.Stride), C.float(beta), pd, C.int64_t(dst.Stride), pw)
		return
	}
	C.scalegnn_gemm_bf16(cTrans(tA), cTrans(tB), C.int64_t(m), C.int64_t(n), C.int64_t(k), C.float(alpha),
		pa, C.int64_t(a.Stride), pb, C.int64_t(b.Stride), C.float(beta), pd, C.int64_t(dst.Stride), pw)
}

// The widening path cuts the inner dimension into chunks of widenK and
// op(a)'s rows into chunks of widenM, so that the float32 copies of a
// chunk of op(b) (widenK×n) and of op(a) (widenM×widenK) stay in the L2
// cache (a quarter MiB each at n = 256) while sgemm reads them, and the
// bfloat16 operands are read from memory once (op(b) once per block).
const (
	widenK = 256
	widenM = 256
)

// widenPool holds the float32 scratch of gemmWidened, one *[]float32 per
// block in flight.
var widenPool sync.Pool

// gemmWidened computes dst = alpha·op(a)·op(b) + beta·dst (m, n, k > 0)
// by sgemm on float32 copies of chunks of a and b: the chunks of the
// inner dimension after the first accumulate into dst (beta 1).
func gemmWidened(tA, tB spmm.Op, alpha float32, a, b spmm.DenseBF16, beta float32, dst spmm.Dense, m, n, k int) {
	kc, mc := min(k, widenK), min(m, widenM)
	need := kc*n + mc*kc
	bufp, _ := widenPool.Get().(*[]float32)
	if bufp == nil || cap(*bufp) < need {
		s := make([]float32, need)
		bufp = &s
	}
	defer widenPool.Put(bufp)
	fb, fa := (*bufp)[:kc*n], (*bufp)[kc*n:need]
	for k0 := 0; k0 < k; k0 += kc {
		k1 := min(k, k0+kc)
		var bw spmm.Dense
		if tB == spmm.Trans {
			bw = widen(fb, spmm.SliceBF16(b, 0, n, k0, k1))
		} else {
			bw = widen(fb, spmm.SliceBF16(b, k0, k1, 0, n))
		}
		bt := beta
		if k0 > 0 {
			bt = 1
		}
		for i0 := 0; i0 < m; i0 += mc {
			i1 := min(m, i0+mc)
			var aw spmm.Dense
			if tA == spmm.Trans {
				aw = widen(fa, spmm.SliceBF16(a, k0, k1, i0, i1))
			} else {
				aw = widen(fa, spmm.SliceBF16(a, i0, i1, k0, k1))
			}
			sgemm(tA, tB, alpha, aw, bw, bt, spmm.Slice(dst, i0, i1, 0, n), i1-i0, n, k1-k0)
		}
	}
}

// widen copies the non-empty s into buf as a float32 matrix with stride
// s.Cols and returns it.
func widen(buf []float32, s spmm.DenseBF16) spmm.Dense {
	d := spmm.Dense{Rows: s.Rows, Cols: s.Cols, Stride: s.Cols, Data: buf[:s.Rows*s.Cols]}
	C.scalegnn_bf16_widen((*C.float)(unsafe.Pointer(&d.Data[0])), C.int64_t(d.Stride),
		(*C.uint16_t)(unsafe.Pointer(&s.Data[0])), C.int64_t(s.Stride), C.int64_t(s.Rows), C.int64_t(s.Cols))
	return d
}

// cTrans is a spmm.Op as the C kernels' transa and transb.
func cTrans(t spmm.Op) C.int {
	if t == spmm.Trans {
		return 1
	}
	return 0
}
