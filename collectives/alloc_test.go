package collectives

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/internal/alloctest"
)

// allocsPerCall runs call on every rank of an n-rank Local world, warm
// times and then runs times in lockstep, and returns the heap allocations
// of the whole process during the timed calls, divided by runs: the
// allocations of one call summed over all ranks. testing.AllocsPerRun
// counts per process too, but runs its function on one goroutine.
func allocsPerCall(t *testing.T, n, warm, runs int, setup func(c Comm) func() error) float64 {
	t.Helper()
	m := alloctest.NewMeter(n)
	errs := RunLocal(n, func(c Comm) error {
		call := setup(c)
		warmUp := func() error {
			for range warm {
				if err := call(); err != nil {
					return err
				}
			}
			return nil
		}
		if err := warmUp(); err != nil {
			return err
		}
		m.GC()
		if err := warmUp(); err != nil {
			return err
		}
		m.Start()
		for range runs {
			if err := call(); err != nil {
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
	return float64(m.Mallocs()) / float64(runs)
}

// allocCases are the collectives a training step makes, each as a
// function that makes one call on a rank's Comm.
func allocCases() map[string]func(c Comm) func() error {
	const m = 1000
	return map[string]func(c Comm) func() error{
		"Barrier": func(c Comm) func() error { return c.Barrier },
		"AllReduceF32": func(c Comm) func() error {
			buf := make([]float32, m)
			return func() error { return c.AllReduceF32(buf, Sum) }
		},
		"AllReduceF64": func(c Comm) func() error {
			buf := make([]float64, m)
			return func() error { return c.AllReduceF64(buf, Max) }
		},
		"AllReduceI64": func(c Comm) func() error {
			buf := make([]int64, m)
			return func() error { return c.AllReduceI64(buf, Min) }
		},
		"AllReduceBF16": func(c Comm) func() error {
			buf := make([]float32, m)
			return func() error { return c.AllReduceBF16(buf) }
		},
		"IAllReduceF32+Wait": func(c Comm) func() error {
			buf := make([]float32, m)
			return func() error {
				q, err := c.IAllReduceF32(buf, Sum)
				if err != nil {
					return err
				}
				return q.Wait()
			}
		},
		"IAllReduceBF16+Wait": func(c Comm) func() error {
			buf := make([]float32, m)
			return func() error {
				q, err := c.IAllReduceBF16(buf)
				if err != nil {
					return err
				}
				return q.Wait()
			}
		},
		"two IAllReduceF32 overlapping an AllReduceF32": func(c Comm) func() error {
			a, b, x := make([]float32, m), make([]float32, m/2), make([]float32, 3)
			return func() error {
				qa, err := c.IAllReduceF32(a, Sum)
				if err != nil {
					return err
				}
				qb, err := c.IAllReduceF32(b, Max)
				if err != nil {
					return err
				}
				if err := c.AllReduceF32(x, Sum); err != nil {
					return err
				}
				if err := qb.Wait(); err != nil {
					return err
				}
				return qa.Wait()
			}
		},
		"AllGatherF32": func(c Comm) func() error {
			src, dst := make([]float32, m), make([]float32, m*c.Size())
			return func() error { return c.AllGatherF32(dst, src) }
		},
		"AllGatherVF32": func(c Comm) func() error {
			counts := make([]int, c.Size())
			total := 0
			for i := range counts {
				counts[i] = m + i
				total += counts[i]
			}
			src, dst := make([]float32, counts[c.Rank()]), make([]float32, total)
			return func() error { return c.AllGatherVF32(dst, src, counts) }
		},
		"ReduceScatterF32": func(c Comm) func() error {
			dst, src := make([]float32, m), make([]float32, m*c.Size())
			return func() error { return c.ReduceScatterF32(dst, src) }
		},
		"BcastF32": func(c Comm) func() error {
			buf := make([]float32, m)
			return func() error { return c.BcastF32(buf, c.Size()-1) }
		},
		"IBcastF32+Wait": func(c Comm) func() error {
			buf := make([]float32, m)
			return func() error {
				q, err := c.IBcastF32(buf, 0)
				if err != nil {
					return err
				}
				return q.Wait()
			}
		},
		"BcastBytes": func(c Comm) func() error {
			buf := make([]byte, m)
			return func() error { return c.BcastBytes(buf, 0) }
		},
		"AlltoallvF32": func(c Comm) func() error {
			n := c.Size()
			counts := make([]int, n)
			for i := range counts {
				counts[i] = m / n
			}
			send, recv := make([]float32, m), make([]float32, m)
			return func() error { return c.AlltoallvF32(send, counts, recv, counts) }
		},
	}
}

// steadyAllocs returns the fewest allocations per call (all ranks) over a
// few windows of runs calls each, after warm calls: the runtime's own
// pools (the sudogs a blocked goroutine takes, emptied by every garbage
// collection) refill in the first windows, while an allocation the code
// makes per call shows in every window.
func steadyAllocs(t *testing.T, n int, setup func(c Comm) func() error) float64 {
	t.Helper()
	least := math.Inf(1)
	for range 3 {
		least = min(least, allocsPerCall(t, n, 20, 100, setup))
		if least == 0 {
			break
		}
	}
	return least
}

// TestLocalAllocatesNothing: once warm, no collective of Local makes a
// heap allocation on any rank (on 2 ranks, AllReduceF32 made 7 a call
// before the rounds, requests and scratch were reused).
func TestLocalAllocatesNothing(t *testing.T) {
	for _, n := range []int{2, 4} {
		for name, setup := range allocCases() {
			if a := steadyAllocs(t, n, setup); a != 0 {
				t.Errorf("%d ranks: %s makes %v allocations per call (all ranks), want 0", n, name, a)
			}
		}
	}
}

// TestWaitInAnyOrder: ranks may wait for their nonblocking requests in
// different orders, as MPI allows, since a peer reads a request's copy of
// the input, not the buffer its Wait writes.
func TestWaitInAnyOrder(t *testing.T) {
	const n = 3
	errs := within(t, func() []error {
		return RunLocal(n, func(c Comm) error {
			for round := range 4 {
				bufs := make([][]float32, 3)
				reqs := make([]Request, 3)
				for i := range bufs {
					bufs[i] = []float32{float32(c.Rank() + 10*i + 100*round)}
					var err error
					if reqs[i], err = c.IAllReduceF32(bufs[i], Sum); err != nil {
						return err
					}
				}
				// Rank r waits from request r on, wrapping around, with a
				// blocking call in between.
				for k := range reqs {
					i := (c.Rank() + k) % len(reqs)
					if err := reqs[i].Wait(); err != nil {
						return err
					}
					if want := float32(n*(n-1)/2 + n*(10*i+100*round)); bufs[i][0] != want {
						return fmt.Errorf("round %d request %d: got %v, want %v", round, i, bufs[i][0], want)
					}
				}
				if err := c.Barrier(); err != nil {
					return err
				}
			}
			return nil
		})
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}
