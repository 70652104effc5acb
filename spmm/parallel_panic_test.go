package spmm

import "testing"

type rangePanic int

// TestParallelRangesPanicReachesCaller: a range that panics, on a
// goroutine or on the caller (the last), panics parallelRanges on the
// caller with its value.
func TestParallelRangesPanicReachesCaller(t *testing.T) {
	bounds := []int{0, 10, 10, 20, 30}
	for _, at := range []int{0, 15, 25} {
		got := func() (v any) {
			defer func() { v = recover() }()
			parallelRanges(bounds, func(lo, hi int) {
				if lo <= at && at < hi {
					panic(rangePanic(at))
				}
			})
			return nil
		}()
		if got != rangePanic(at) {
			t.Errorf("range holding %d: parallelRanges panicked with %v (%T), want rangePanic(%d)", at, got, got, at)
		}
	}
}
