package cpu

import "testing"

type partPanic int

// TestParallelPanicReachesCaller: a part that panics, on a goroutine or
// on the caller (the last), panics parallel on the caller with its value.
func TestParallelPanicReachesCaller(t *testing.T) {
	for _, at := range []int{0, 2, 3} {
		got := func() (v any) {
			defer func() { v = recover() }()
			parallel(4, func(p int) {
				if p == at {
					panic(partPanic(p))
				}
			})
			return nil
		}()
		if got != partPanic(at) {
			t.Errorf("part %d: parallel panicked with %v (%T), want partPanic(%d)", at, got, got, at)
		}
	}
}
