//go:build noblas

package cpu

// noBLAS is what BLASConfig reports under -tags noblas.
const noBLAS = "none (built with -tags noblas): GEMM by gonum's pure-Go Sgemm"

// SetBLASThreads does nothing under -tags noblas: no BLAS is linked.
func SetBLASThreads(int) {}

// BLASConfig says that no BLAS is linked and gonum computes the GEMMs.
func BLASConfig() string { return noBLAS }

// BLASCore returns "": no BLAS is linked.
func BLASCore() string { return "" }
