package cpu

import "scalegnn/spmm"

// Gemm computes dst = alpha·op(a)·op(b) + beta·dst with sgemm: CBLAS, or
// gonum's Sgemm under -tags noblas. As in BLAS, beta == 0 overwrites dst
// without reading it. Large products are cut into blocks of dst rows (or
// columns, when dst is short) that run as separate sgemm calls on the
// backend's goroutines (PlanGemm, GemmPart), so the backend uses the same
// cores for GEMM as for SpMM without BLAS threads (gonum's Sgemm still
// splits a large block over GOMAXPROCS goroutines of its own). A product
// on one block runs on the caller and allocates nothing.
func (be *Backend) Gemm(tA, tB spmm.Op, alpha float32, a, b spmm.Dense, beta float32, dst spmm.Dense) {
	pl := PlanGemm(tA, tB, a, b, dst, be.workers())
	switch {
	case pl.Parts == 0:
	case pl.Parts == 1:
		GemmPart(pl, 0, tA, tB, alpha, a, b, beta, dst)
	default:
		parallel(pl.Parts, func(p int) { GemmPart(pl, p, tA, tB, alpha, a, b, beta, dst) })
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
