package permute

import "testing"

type rowPanic int

// TestParallelRowsPanicReachesCaller: a task that panics on a worker
// goroutine panics parallelRows on the caller with its value.
func TestParallelRowsPanicReachesCaller(t *testing.T) {
	const n = 5 * rowsPerTask
	for _, at := range []int{0, 2*rowsPerTask + 3, n - 1} {
		got := func() (v any) {
			defer func() { v = recover() }()
			parallelRows(n, func(lo, hi int, _ *int) {
				if lo <= at && at < hi {
					panic(rowPanic(at))
				}
			})
			return nil
		}()
		if got != rowPanic(at) {
			t.Errorf("row %d: parallelRows panicked with %v (%T), want rowPanic(%d)", at, got, got, at)
		}
	}
}
