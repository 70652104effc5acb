// Package spmm owns the local (single-rank) kernels of scalegnn: the CSR
// sparse matrix type, the row-major Dense view, and the Backend interface
// through which the distributed layers call sparse-times-dense products and
// GEMMs. Native, the pure-Go implementation beside the interface, is the
// reference and the fallback; spmm/cpu is the fast cgo implementation (a C
// SpMM kernel split over goroutines and CBLAS GEMM), and a CUDA backend can
// be added behind a build tag without touching the callers.
package spmm
