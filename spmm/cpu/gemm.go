package cpu

import "scalegnn/spmm"

// Gemm computes dst = alpha·op(a)·op(b) + beta·dst with sgemm: CBLAS, or
// gonum's Sgemm under -tags noblas. As in BLAS, beta == 0 overwrites dst
// without reading it. Large products are cut into blocks of dst rows (or
// columns, when dst is short) that run as separate sgemm calls on the
// backend's goroutines, so the backend uses the same cores for GEMM as for
// SpMM without BLAS threads (gonum's Sgemm still splits a large block over
// GOMAXPROCS goroutines of its own).
func (be *Backend) Gemm(tA, tB spmm.Op, alpha float32, a, b spmm.Dense, beta float32, dst spmm.Dense) {
	m, n, k := spmm.CheckGemm(tA, tB, a, b, dst)
	if m == 0 || n == 0 {
		return
	}
	checkSgemmInts(m, n, k, a.Stride, b.Stride, dst.Stride)
	if k == 0 || alpha == 0 {
		// BLAS would handle these too, but not all implementations accept
		// the zero leading dimensions an empty operand may have.
		scale(dst, beta)
		return
	}
	workers := be.workers()
	if float64(m)*float64(n)*float64(k) < minParallelWork {
		workers = 1
	}
	const minBlock = 32 // below this a block no longer fills BLAS's micro-kernel
	switch {
	case workers > 1 && m >= 2*minBlock:
		parts := min(workers, m/minBlock)
		parallel(parts, func(p int) {
			lo, hi := m*p/parts, m*(p+1)/parts
			var ap spmm.Dense // rows [lo, hi) of op(a)
			if tA == spmm.Trans {
				ap = spmm.Slice(a, 0, a.Rows, lo, hi)
			} else {
				ap = spmm.Slice(a, lo, hi, 0, a.Cols)
			}
			sgemm(tA, tB, alpha, ap, b, beta, spmm.Slice(dst, lo, hi, 0, n), hi-lo, n, k)
		})
	case workers > 1 && n >= 2*minBlock:
		parts := min(workers, n/minBlock)
		parallel(parts, func(p int) {
			lo, hi := n*p/parts, n*(p+1)/parts
			var bp spmm.Dense // columns [lo, hi) of op(b)
			if tB == spmm.Trans {
				bp = spmm.Slice(b, lo, hi, 0, b.Cols)
			} else {
				bp = spmm.Slice(b, 0, b.Rows, lo, hi)
			}
			sgemm(tA, tB, alpha, a, bp, beta, spmm.Slice(dst, 0, m, lo, hi), m, hi-lo, k)
		})
	default:
		sgemm(tA, tB, alpha, a, b, beta, dst, m, n, k)
	}
}

// scale computes dst = beta·dst, writing zeros without reading when beta is 0.
func scale(dst spmm.Dense, beta float32) {
	switch beta {
	case 1:
	case 0:
		spmm.Zero(dst)
	default:
		spmm.Scale(dst, beta, dst)
	}
}
