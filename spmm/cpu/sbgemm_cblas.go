//go:build !noblas

package cpu

// #include "kernels.h"
import "C"

import (
	"unsafe"

	"scalegnn/spmm"
)

// sbgemmAvailable reports whether the linked BLAS exports cblas_sbgemm.
func sbgemmAvailable() bool { return C.scalegnn_sbgemm_available() != 0 }

// sbgemm calls cblas_sbgemm on non-empty operands (m, n, k > 0), as sgemm
// calls cblas_sgemm.
func sbgemm(tA, tB spmm.Op, alpha float32, a, b spmm.DenseBF16, beta float32, dst spmm.Dense, m, n, k int) {
	C.scalegnn_sbgemm(cTrans(tA), cTrans(tB), C.int(m), C.int(n), C.int(k),
		C.float(alpha), (*C.uint16_t)(unsafe.Pointer(&a.Data[0])), C.int(max(a.Stride, 1)),
		(*C.uint16_t)(unsafe.Pointer(&b.Data[0])), C.int(max(b.Stride, 1)),
		C.float(beta), (*C.float)(unsafe.Pointer(&dst.Data[0])), C.int(max(dst.Stride, 1)))
}
