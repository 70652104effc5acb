//go:build !noblas

package cpu

// #include "kernels.h"
import "C"

import (
	"os"
	"strconv"
)

func init() {
	// Several MPI ranks usually share a node's cores, and Backend.Gemm
	// splits large products over its own goroutines, so BLAS threads would
	// only oversubscribe the cores. An explicit OPENBLAS_NUM_THREADS in the
	// environment is the user's choice and is left alone.
	if _, ok := os.LookupEnv("OPENBLAS_NUM_THREADS"); !ok {
		SetBLASThreads(1)
	}
}

// SetBLASThreads sets the number of threads OpenBLAS uses inside one sgemm
// call (n < 1 means 1). The package sets 1 when it loads unless
// OPENBLAS_NUM_THREADS is set. With a CBLAS other than OpenBLAS it does
// nothing; configure that library through its own environment variables.
func SetBLASThreads(n int) {
	C.scalegnn_blas_set_threads(C.int(max(n, 1)))
}

// BLASConfig describes the linked BLAS for logs: OpenBLAS's build
// configuration, the kernel it selected for this CPU and its thread count,
// e.g. "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake
// MAX_THREADS=64; core=Cooperlake; threads=1". It returns "" when the
// library is not OpenBLAS.
func BLASConfig() string {
	cfg := C.scalegnn_blas_config()
	if cfg == nil {
		return ""
	}
	s := C.GoString(cfg)
	if core := BLASCore(); core != "" {
		s += "; core=" + core
	}
	return s + "; threads=" + strconv.Itoa(int(C.scalegnn_blas_threads()))
}

// BLASCore returns the name of the kernel set OpenBLAS selected for this
// CPU ("Haswell", "SkylakeX", ...), or "" when the library is not OpenBLAS.
// "Prescott" on a modern x86-64 means OpenBLAS did not recognise the CPU
// and runs generic kernels, over twice as slow; the cure is
// OPENBLAS_CORETYPE=Haswell (or SkylakeX with AVX-512) in the environment of
// every rank. It must be set before the process starts: the library reads it
// while it is loaded, before any Go code runs.
func BLASCore() string {
	core := C.scalegnn_blas_corename()
	if core == nil {
		return ""
	}
	return C.GoString(core)
}
