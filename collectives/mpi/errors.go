//go:build !nompi

package mpi

// #include "shim.h"
import "C"

import (
	"fmt"
	"math"
	"unsafe"
)

// check returns nil if code is MPI_SUCCESS and an *Error for the call
// otherwise.
func check(call string, code C.int) error {
	if code == C.sg_success() {
		return nil
	}
	return &Error{Call: call, Code: int(code), Text: errorString(code)}
}

// errorString returns MPI's text for an error code.
func errorString(code C.int) string {
	buf := make([]byte, int(C.sg_max_error_string())+1)
	var n C.int
	if C.MPI_Error_string(code, (*C.char)(unsafe.Pointer(&buf[0])), &n) != C.sg_success() {
		return "unknown error"
	}
	return string(buf[:min(int(n), len(buf))])
}

// cInt converts a count, a length or a displacement to the C int that MPI
// takes, or returns an error naming what if it does not fit.
func cInt(n int, what string) (C.int, error) {
	if n < 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("%s = %d does not fit MPI's int count (0 to %d); split the call", what, n, math.MaxInt32)
	}
	return C.int(n), nil
}

// cSigned converts a color or a key to a C int.
func cSigned(n int, what string) (C.int, error) {
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("%s = %d does not fit a C int", what, n)
	}
	return C.int(n), nil
}
