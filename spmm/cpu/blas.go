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
// e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64;
// core=Haswell; threads=1". It returns "" when the library is not OpenBLAS.
//
// OpenBLAS 0.3.21 does not recognise some recent CPUs (AMD Zen 4 among
// them) and falls back to its slow Prescott kernels; core=Prescott in this
// string is the symptom. The cure is OPENBLAS_CORETYPE=Haswell (or
// SkylakeX where AVX-512 is available) in the environment of every rank:
// it must be set before the process starts, since the library reads it as
// it is loaded, before any Go code runs.
func BLASConfig() string {
	cfg := C.scalegnn_blas_config()
	if cfg == nil {
		return ""
	}
	s := C.GoString(cfg)
	if core := C.scalegnn_blas_corename(); core != nil {
		s += "; core=" + C.GoString(core)
	}
	return s + "; threads=" + strconv.Itoa(int(C.scalegnn_blas_threads()))
}
