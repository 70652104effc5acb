package cpu

// #include "kernels.h"
import "C"

import "unsafe"

// triad computes a = b + s·c (STREAM's triad, 12 bytes moved per element)
// over threads goroutines, each on one contiguous share, as STREAM splits
// it. It exists for the bandwidth benchmark, which compares SpMM with it in
// the same run; the slices must have equal, non-zero lengths.
func triad(a, b, c []float32, s float32, threads int) {
	n := len(a)
	b, c = b[:n], c[:n]
	parallel(threads, func(p int) {
		lo, hi := n*p/threads, n*(p+1)/threads
		if lo < hi {
			C.scalegnn_triad((*C.float)(unsafe.Pointer(&a[0])), (*C.float)(unsafe.Pointer(&b[0])),
				(*C.float)(unsafe.Pointer(&c[0])), C.float(s), C.int64_t(lo), C.int64_t(hi))
		}
	})
}
