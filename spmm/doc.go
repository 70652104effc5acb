// Package spmm owns the local (single-rank) kernels of scalegnn: the CSR
// sparse matrix type, the row-major Dense view, and the Backend interface
// through which the distributed layers call sparse-times-dense products and
// GEMMs. Native, the pure-Go implementation beside the interface, is the
// reference and the fallback; spmm/cpu is the fast cgo implementation (a C
// SpMM kernel split over goroutines and CBLAS GEMM), and a CUDA backend can
// be added behind a build tag without touching the callers.
//
// Conventions, as in gonum: the destination is the first argument; Dense
// values are views (Slice shares storage, Stride may exceed Cols) and
// every kernel honours the stride; operands whose shapes do not agree are
// programmer errors and panic with a ShapeError, whichever backend runs.
// Gemm follows BLAS: beta == 0 overwrites dst without reading it, so a
// reused buffer holding NaN does not poison the result.
//
// Native splits SpMM over goroutines by nonzero count (PartitionRows); its
// GEMM is gonum's pure-Go Sgemm (blas/gonum via blas32). The element-wise
// helpers (Add, AddTo, AddScaled, Scale, Zero, Copy) cover what a GCN layer
// needs between products. bfloat16 operands are DenseBF16 views of uint16
// bits, rounded by ToBF16 (nearest even, NaN kept quiet), the one rounding
// rule of the package. Package spmm/spmmtest holds the conformance suite
// and benchmarks every backend runs (TestBackend, BenchSpMM, BenchGemm).
//
// docs/architecture.md shows how this package fits with the others.
package spmm
