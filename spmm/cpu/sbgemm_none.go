//go:build noblas

package cpu

import "scalegnn/spmm"

// sbgemmAvailable is false under -tags noblas: no BLAS is linked.
func sbgemmAvailable() bool { return false }

// sbgemm is never called under -tags noblas (bf16Path is never bf16SBGEMM).
func sbgemm(spmm.Op, spmm.Op, float32, spmm.DenseBF16, spmm.DenseBF16, float32, spmm.Dense, int, int, int) {
	panic("cpu: sbgemm without a BLAS")
}
