package cpu

// #include "kernels.h"
import "C"

import (
	"unsafe"

	"scalegnn/spmm"
)

// A product whose left operand is mostly zeros — the input features of
// bag-of-words graphs, 1.3% nonzero on Cora and 0.85% on CiteSeer, after
// dropout fewer — skips the zeros: each nonzero a[i, k] adds a[i, k]·b[k, :]
// to its output row, instead of sgemm multiplying every zero. On CiteSeer's
// first GAT layer (3327 × 3703 times 3703 × 64) sgemm ran at about 14
// GFLOP/s per core on the development machine, 90 ms a product; the
// nonzeros are 1% of that work.

const (
	// sparseMinK is the smallest inner dimension worth the density scan:
	// feature matrices are thousands wide, hidden layers a few hundred.
	sparseMinK = 512
	// sparseDensity: op(a) is sparse with at most one nonzero in
	// sparseDensity entries. Skipping zeros pays while the nonzeros'
	// scalar multiply-adds cost less than sgemm's vector ones on every
	// entry, about one in ten here; one in sixteen leaves a margin.
	sparseDensity = 16
)

// sparseInput reports whether the product op(a)·b (b not transposed, k
// the inner dimension) should skip op(a)'s zeros: whether at most one in
// sparseDensity entries of sampleRows of a's rows, spread evenly, is
// nonzero. A sample that misjudges costs time, not accuracy: both paths
// compute the product.
func sparseInput(tA, tB spmm.Op, a spmm.Dense, k int) bool {
	if tB != spmm.NoTrans || k < sparseMinK || a.Rows == 0 || a.Cols == 0 {
		return false
	}
	const sampleRows = 64
	step := max(1, a.Rows/sampleRows)
	nz, all := 0, 0
	for i := 0; i < a.Rows; i += step {
		for _, v := range a.Data[i*a.Stride : i*a.Stride+a.Cols] {
			if v != 0 {
				nz++
			}
		}
		all += a.Cols
	}
	return nz*sparseDensity <= all
}

// gemmSparseRows computes output rows [lo, hi) of dst = alpha·op(a)·b +
// beta·dst, summing a[i, k]·b[row, :] over op(a)'s nonzeros in order, in
// double, and rounding each entry once (gemm_sparse.c): each output row
// is the same however the rows are split, and nearly the exact product.
// As in BLAS, beta == 0 overwrites dst without reading it.
func gemmSparseRows(tA spmm.Op, alpha float32, a, b spmm.Dense, beta float32, dst spmm.Dense, lo, hi int) {
	if lo >= hi {
		return
	}
	scale(spmm.Slice(dst, lo, hi, 0, dst.Cols), beta)
	if dst.Cols == 0 || a.Rows == 0 || a.Cols == 0 {
		return
	}
	trans := 0
	if tA == spmm.Trans {
		trans = 1
	}
	C.scalegnn_gemm_sparse_rows(C.int(trans), C.float(alpha),
		(*C.float)(unsafe.Pointer(&a.Data[0])), C.int64_t(a.Stride), C.int64_t(a.Rows), C.int64_t(a.Cols),
		(*C.float)(unsafe.Pointer(&b.Data[0])), C.int64_t(b.Stride),
		(*C.float)(unsafe.Pointer(&dst.Data[0])), C.int64_t(dst.Stride), C.int64_t(dst.Cols),
		C.int64_t(lo), C.int64_t(hi))
}
