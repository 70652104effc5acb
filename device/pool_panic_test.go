package device

import (
	"sync/atomic"
	"testing"
)

// panicJob panics in the part that holds index at, and counts the
// elements the other parts ran.
type panicJob struct {
	at  int
	ran atomic.Int64
}

func (j *panicJob) run(lo, hi int) {
	if lo <= j.at && j.at < hi {
		panic(poolPanic(j.at))
	}
	j.ran.Add(int64(hi - lo))
}

type poolPanic int

// TestPoolPanicReachesCaller: a part that panics, on a worker or on the
// caller, panics run on the caller with the part's value, after the other
// parts ended, and leaves the pool working.
func TestPoolPanicReachesCaller(t *testing.T) {
	const total = 4 * minParallel
	p := newPool(4)
	defer p.close()
	for _, c := range []struct {
		name string
		at   int
	}{
		{"worker 0", 0},
		{"worker 2", total/2 + 1},
		{"caller", total - 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := &panicJob{at: c.at}
			got := func() (v any) {
				defer func() { v = recover() }()
				p.run(j, total, total)
				return nil
			}()
			if got != poolPanic(c.at) {
				t.Fatalf("run panicked with %v (%T), want poolPanic(%d)", got, got, c.at)
			}
			if want := int64(total - total/p.threads()); j.ran.Load() != want {
				t.Fatalf("the other parts ran %d elements before run panicked, want %d", j.ran.Load(), want)
			}
			ok := &panicJob{at: -1}
			p.run(ok, total, total)
			if ok.ran.Load() != total {
				t.Fatalf("after the panic the pool ran %d of %d elements", ok.ran.Load(), total)
			}
		})
	}
}
