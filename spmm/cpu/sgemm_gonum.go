//go:build noblas

package cpu

import "scalegnn/spmm"

// checkSgemmInts accepts every size: gonum's Sgemm takes Go ints.
func checkSgemmInts(...int) {}

// gonumGemm computes the products under -tags noblas: spmm.Native's Gemm is
// gonum's pure-Go Sgemm (blas/gonum through blas32).
var gonumGemm spmm.Native

// sgemm computes one block of a product with gonum's Sgemm (m, n, k > 0).
func sgemm(tA, tB spmm.Op, alpha float32, a, b spmm.Dense, beta float32, dst spmm.Dense, _, _, _ int) {
	gonumGemm.Gemm(tA, tB, alpha, a, b, beta, dst)
}
