package watchdog

import (
	"math"
	"testing"

	"scalegnn/collectives"
	"scalegnn/internal/alloctest"
)

// TestCommAllocatesNothing: the labels cost no allocation, so a wrapped
// Local communicator's steady calls, nonblocking ones included, allocate
// nothing on any rank (each nonblocking call boxed a request before).
func TestCommAllocatesNothing(t *testing.T) {
	const n, runs = 3, 50
	least := math.Inf(1)
	for range 3 {
		m := alloctest.NewMeter(n)
		errs := collectives.RunLocal(n, func(c collectives.Comm) error {
			w := New(c.Rank(), DefaultPolicy(), func(msg string) { t.Errorf("watchdog fired: %s", msg) })
			wc := w.Wrap(c, "world")
			a, b := make([]float32, 100), make([]float32, 10)
			step := func() error {
				qa, err := wc.IAllReduceF32(a, collectives.Sum)
				if err != nil {
					return err
				}
				qb, err := wc.IAllReduceBF16(b)
				if err != nil {
					return err
				}
				if err := wc.AllReduceF32(b, collectives.Max); err != nil {
					return err
				}
				if err := qb.Wait(); err != nil {
					return err
				}
				return qa.Wait()
			}
			for k := range 2*runs + 1 {
				switch k {
				case runs / 2:
					m.GC()
				case runs:
					m.Start()
				}
				if err := step(); err != nil {
					return err
				}
			}
			m.Stop()
			return nil
		})
		for r, err := range errs {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
		least = min(least, float64(m.Mallocs())/(runs+1))
	}
	if least != 0 {
		t.Errorf("a step of two nonblocking and one blocking all-reduce allocates %v times (all ranks), want 0", least)
	}
}
