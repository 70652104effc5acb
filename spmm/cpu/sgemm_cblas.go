//go:build !noblas

package cpu

// #include "kernels.h"
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"scalegnn/spmm"
)

// checkSgemmInts panics with a spmm.ShapeError if a dimension or stride of
// a product does not fit the C int of the CBLAS interface.
func checkSgemmInts(dims ...int) {
	for _, v := range dims {
		if v > math.MaxInt32 {
			panic(spmm.ShapeError(fmt.Sprintf("Gemm: dimension or stride %d exceeds the 32-bit CBLAS interface", v)))
		}
	}
}

// sgemm calls cblas_sgemm on non-empty operands (m, n, k > 0). Leading
// dimensions are the strides, which CheckGemm has verified are at least
// the stored row lengths.
func sgemm(tA, tB spmm.Op, alpha float32, a, b spmm.Dense, beta float32, dst spmm.Dense, m, n, k int) {
	C.scalegnn_sgemm(cTrans(tA), cTrans(tB), C.int(m), C.int(n), C.int(k),
		C.float(alpha), (*C.float)(unsafe.Pointer(&a.Data[0])), C.int(max(a.Stride, 1)),
		(*C.float)(unsafe.Pointer(&b.Data[0])), C.int(max(b.Stride, 1)),
		C.float(beta), (*C.float)(unsafe.Pointer(&dst.Data[0])), C.int(max(dst.Stride, 1)))
}
