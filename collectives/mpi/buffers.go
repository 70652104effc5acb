//go:build !nompi

package mpi

// #include "shim.h"
import "C"

import (
	"fmt"
	"math"
	"unsafe"
)

// ptr returns the address of s's first element, or nil for an empty slice:
// &s[0] of an empty slice is out of range (or points past a backing
// array), and the C side substitutes a valid dummy for nil.
func ptr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// overlap reports whether a and b share memory. MPI forbids aliased send
// and receive buffers (except through MPI_IN_PLACE), so an overlapping
// input is copied first.
func overlap[T any](a, b []T) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	size := unsafe.Sizeof(a[0])
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(len(b))*size && b0 < a0+uintptr(len(a))*size
}

// countsAndDispls converts the block lengths of a v-collective to C ints
// and computes the displacements of contiguous blocks in rank order. It
// returns an error if a count is negative or a count or a displacement
// does not fit MPI's int. total is the sum of the counts.
func countsAndDispls(counts []int, what string, cs, displs []C.int) (_, _ []C.int, total int, err error) {
	cs, displs = growCInts(cs, len(counts)), growCInts(displs, len(counts))
	for i, n := range counts {
		if n < 0 {
			return nil, nil, 0, fmt.Errorf("%s[%d] = %d is negative", what, i, n)
		}
		// The element's name is formatted only for the error: formatting
		// it on every call allocated a string per rank per collective.
		if n > math.MaxInt32 {
			_, err = cInt(n, fmt.Sprintf("%s[%d]", what, i))
			return nil, nil, 0, err
		}
		cs[i] = C.int(n)
		if total > math.MaxInt32 {
			return nil, nil, 0, fmt.Errorf("displacement of block %d of %s is %d, beyond MPI's int (%d); split the call",
				i, what, total, math.MaxInt32)
		}
		displs[i] = C.int(total)
		total += n
	}
	return cs, displs, total, nil
}

// growCInts returns s with length n, reallocated only when it is too short.
func growCInts(s []C.int, n int) []C.int {
	if cap(s) < n {
		return make([]C.int, n)
	}
	return s[:n]
}
