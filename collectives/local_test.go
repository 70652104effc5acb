package collectives

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// within runs f and fails the test if it takes longer than a few seconds,
// so that a bug that hangs a rank fails instead of stalling the test run.
func within(t *testing.T, f func() []error) []error {
	t.Helper()
	done := make(chan []error, 1)
	go func() { done <- f() }()
	select {
	case errs := <-done:
		return errs
	case <-time.After(20 * time.Second):
		t.Fatal("ranks did not return within 20s")
		return nil
	}
}

func TestAbortOnError(t *testing.T) {
	boom := errors.New("boom")
	// fail is what rank 2 does: join the split if the others need it, let
	// the others block, then fail.
	fail := func(split bool) func(c Comm) error {
		return func(c Comm) error {
			if split {
				if _, err := c.Split(c.Rank()%2, 0); err != nil {
					return err
				}
			}
			time.Sleep(10 * time.Millisecond)
			return boom
		}
	}
	// Everything a rank can block in, to check that an abort releases it.
	for _, tc := range []struct {
		name  string
		split bool
		block func(c Comm) error
	}{
		{"Barrier", false, func(c Comm) error { return c.Barrier() }},
		{"AllReduceF32", false, func(c Comm) error { return c.AllReduceF32(make([]float32, 3), Sum) }},
		{"IAllReduceF32.Wait", false, func(c Comm) error {
			req, err := c.IAllReduceF32(make([]float32, 3), Sum)
			if err != nil {
				return err
			}
			return req.Wait()
		}},
		{"Split", false, func(c Comm) error { _, err := c.Split(0, 0); return err }},
		{"split AllGatherF32", true, func(c Comm) error {
			// Rank 0 blocks in its group's all-gather (rank 2 is in its
			// group); ranks 1 and 3 complete theirs and block in a world
			// barrier.
			s, err := c.Split(c.Rank()%2, 0)
			if err != nil {
				return err
			}
			if err := s.AllGatherF32(make([]float32, s.Size()), []float32{1}); err != nil {
				return err
			}
			return c.Barrier()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := within(t, func() []error {
				return RunLocal(4, func(c Comm) error {
					if c.Rank() == 2 {
						return fail(tc.split)(c)
					}
					return tc.block(c)
				})
			})
			for r, err := range errs {
				switch {
				case r == 2 && err != boom:
					t.Errorf("rank 2: got %v, want boom", err)
				case r != 2 && !errors.Is(err, ErrAborted):
					t.Errorf("rank %d: got %v, want ErrAborted", r, err)
				case r != 2 && !strings.Contains(err.Error(), "rank 2 failed: boom"):
					t.Errorf("rank %d: %v does not name the reason", r, err)
				}
			}
		})
	}
}

func TestAbortOnPanic(t *testing.T) {
	errs := within(t, func() []error {
		return RunLocal(3, func(c Comm) error {
			if c.Rank() == 1 {
				var s []int
				_ = s[5] // index out of range
			}
			return c.Barrier()
		})
	})
	if err := errs[1]; err == nil || !strings.Contains(err.Error(), "panicked") ||
		!strings.Contains(err.Error(), "index out of range") || !strings.Contains(err.Error(), "local_test.go") {
		t.Errorf("rank 1: got %v, want the panic with its stack", err)
	}
	for _, r := range []int{0, 2} {
		if !errors.Is(errs[r], ErrAborted) {
			t.Errorf("rank %d: got %v, want ErrAborted", r, errs[r])
		}
	}
}

func TestAbortMethod(t *testing.T) {
	errs := within(t, func() []error {
		return RunLocal(3, func(c Comm) error {
			if c.Rank() == 0 {
				c.Abort(3)
				// Abort returns for Local; later calls fail at once.
				if err := c.Barrier(); !errors.Is(err, ErrAborted) {
					return fmt.Errorf("barrier after Abort: %v", err)
				}
				return nil
			}
			return c.Barrier()
		})
	})
	if errs[0] != nil {
		t.Errorf("rank 0: %v", errs[0])
	}
	for _, r := range []int{1, 2} {
		if !errors.Is(errs[r], ErrAborted) || !strings.Contains(errs[r].Error(), "Abort(3)") {
			t.Errorf("rank %d: got %v, want ErrAborted naming Abort(3)", r, errs[r])
		}
	}
}

func TestAbortWithoutRunLocal(t *testing.T) {
	comms := NewLocalWorld(2)
	errc := make(chan error)
	go func() { errc <- comms[1].AllReduceF64(make([]float64, 2), Max) }()
	time.Sleep(10 * time.Millisecond)
	comms[0].Abort(1)
	select {
	case err := <-errc:
		if !errors.Is(err, ErrAborted) {
			t.Errorf("got %v, want ErrAborted", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("abort did not release the blocked rank")
	}
}

func TestRankReturnsEarly(t *testing.T) {
	errs := within(t, func() []error {
		return RunLocal(3, func(c Comm) error {
			if c.Rank() == 1 {
				return nil // forgets the barrier
			}
			return c.Barrier()
		})
	})
	if errs[1] != nil {
		t.Errorf("rank 1: %v", errs[1])
	}
	for _, r := range []int{0, 2} {
		if !errors.Is(errs[r], ErrAborted) || !strings.Contains(errs[r].Error(), "world rank 1 returned") {
			t.Errorf("rank %d: got %v, want ErrAborted naming rank 1", r, errs[r])
		}
	}
}

func TestMismatchedCalls(t *testing.T) {
	for name, tc := range map[string]struct {
		fn   func(c Comm) error
		want string
	}{
		"collective": {func(c Comm) error {
			if c.Rank() == 0 {
				return c.Barrier()
			}
			return c.AllReduceF32(nil, Sum)
		}, "collective mismatch"},
		"length": {func(c Comm) error {
			return c.AllReduceF32(make([]float32, 3+c.Rank()), Sum)
		}, "elements"},
		"operator": {func(c Comm) error {
			return c.AllReduceI64(make([]int64, 3), Op(c.Rank()))
		}, "operator mismatch"},
		"alltoallv counts": {func(c Comm) error {
			return c.AlltoallvF32(make([]float32, 2), []int{1, 1}, make([]float32, 4), []int{2, 2})
		}, "recvCounts"},
	} {
		t.Run(name, func(t *testing.T) {
			errs := within(t, func() []error { return RunLocal(2, tc.fn) })
			for r, err := range errs {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("rank %d: got %v, want an error about %q", r, err, tc.want)
				}
			}
		})
	}
}

func TestBadArguments(t *testing.T) {
	c := NewLocalWorld(1)[0]
	for name, err := range map[string]error{
		"op":              c.AllReduceF32(nil, Op(7)),
		"allgather dst":   c.AllGatherF32(make([]float32, 3), make([]float32, 2)),
		"allgatherv cnt":  c.AllGatherVF32(nil, nil, []int{1, 2}),
		"allgatherv neg":  c.AllGatherVF32(nil, nil, []int{-1}),
		"reducescatter":   c.ReduceScatterF32(make([]float32, 2), make([]float32, 3)),
		"bcast root":      c.BcastF32(nil, 1),
		"alltoallv short": c.AlltoallvF32(make([]float32, 1), []int{2}, make([]float32, 2), []int{2}),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Nothing above joined a round, so the rank is still in step.
	if err := c.Barrier(); err != nil {
		t.Error(err)
	}
}

func TestSplitOrder(t *testing.T) {
	const n = 7
	keys := []int{5, -2, 5, 9, 0, -2, 5} // ties at 5 and -2
	colors := []int{0, 1, 0, 0, 1, -1, 0}
	want := map[int][]int{0: {0, 2, 6, 3}, 1: {1, 4}} // world ranks by key, ties by rank
	errs := within(t, func() []error {
		return RunLocal(n, func(c Comm) error {
			r := c.Rank()
			s, err := c.Split(colors[r], keys[r])
			if err != nil {
				return err
			}
			if colors[r] < 0 {
				if s != nil {
					return fmt.Errorf("got a communicator for an undefined color")
				}
				return nil
			}
			members := want[colors[r]]
			if s.Size() != len(members) || s.Rank() != slices.Index(members, r) {
				return fmt.Errorf("rank %d of %d, want %d of %d", s.Rank(), s.Size(), slices.Index(members, r), len(members))
			}
			got := make([]float32, s.Size())
			if err := s.AllGatherF32(got, []float32{float32(r)}); err != nil {
				return err
			}
			for i, m := range members {
				if got[i] != float32(m) {
					return fmt.Errorf("members %v, want %v", got, members)
				}
			}
			// Nested: halve the group, reversed.
			ss, err := s.Split(s.Rank()/2, -s.Rank())
			if err != nil {
				return err
			}
			wantSize := min(2, s.Size()-s.Rank()/2*2)
			wantRank := wantSize - 1 - s.Rank()%2
			if ss.Size() != wantSize || ss.Rank() != wantRank {
				return fmt.Errorf("nested: rank %d of %d, want %d of %d", ss.Rank(), ss.Size(), wantRank, wantSize)
			}
			return ss.Barrier()
		})
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

func TestCountersPerComm(t *testing.T) {
	errs := within(t, func() []error {
		return RunLocal(3, func(c Comm) error {
			s, err := c.Split(0, c.Rank())
			if err != nil {
				return err
			}
			if err := s.AllReduceF64(make([]float64, 10), Sum); err != nil {
				return err
			}
			if err := c.BcastBytes(make([]byte, 7), 2); err != nil {
				return err
			}
			if got := s.Counters().Bytes(KindAllReduce); got != 80 {
				return fmt.Errorf("split allreduce bytes %d, want 80", got)
			}
			if got := c.Counters().Bytes(KindAllReduce); got != 0 {
				return fmt.Errorf("world allreduce bytes %d, want 0", got)
			}
			if got := c.Counters().Calls(KindBcast); got != 1 {
				return fmt.Errorf("world bcast calls %d, want 1", got)
			}
			if got := c.Counters().TotalBytes(); got != 7 {
				return fmt.Errorf("world total bytes %d, want 7", got)
			}
			s.Counters().Reset()
			if got := s.Counters().TotalBytes(); got != 0 {
				return fmt.Errorf("after Reset: total bytes %d", got)
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

// TestDeterministicSum checks that a sum of values that round differently
// in different orders is bitwise the same on every rank and equals the sum
// in rank order.
func TestDeterministicSum(t *testing.T) {
	const n, m = 5, 100
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([][]float32, n)
	for r := range data {
		data[r] = make([]float32, m)
		for i := range data[r] {
			data[r][i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(8))))
		}
	}
	want := slices.Clone(data[0])
	for r := 1; r < n; r++ {
		for i := range want {
			want[i] += data[r][i]
		}
	}
	got := make([][]float32, n)
	errs := within(t, func() []error {
		return RunLocal(n, func(c Comm) error {
			buf := slices.Clone(data[c.Rank()])
			req, err := c.IAllReduceF32(buf, Sum)
			if err != nil {
				return err
			}
			if err := req.Wait(); err != nil {
				return err
			}
			got[c.Rank()] = buf
			return nil
		})
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	for r := range got {
		for i := range want {
			if math.Float32bits(got[r][i]) != math.Float32bits(want[i]) {
				t.Fatalf("rank %d index %d: got %v, want %v", r, i, got[r][i], want[i])
			}
		}
	}
}

// TestConcurrentComms has two goroutines per rank run collectives on two
// communicators at once, to give the race detector something to look at.
func TestConcurrentComms(t *testing.T) {
	const n, rounds = 4, 200
	errs := within(t, func() []error {
		return RunLocal(n, func(c Comm) error {
			a, err := c.Split(0, c.Rank())
			if err != nil {
				return err
			}
			b, err := c.Split(0, -c.Rank())
			if err != nil {
				return err
			}
			var wg sync.WaitGroup
			var errA, errB error
			wg.Add(2)
			go func() {
				defer wg.Done()
				for i := range rounds {
					buf := []float32{float32(a.Rank() + i)}
					if errA = a.AllReduceF32(buf, Sum); errA != nil {
						return
					}
					if want := float32(n*i + n*(n-1)/2); buf[0] != want {
						errA = fmt.Errorf("round %d: got %v, want %v", i, buf[0], want)
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				for i := range rounds {
					dst := make([]float32, n)
					if errB = b.AllGatherF32(dst, []float32{float32(i)}); errB != nil {
						return
					}
				}
			}()
			wg.Wait()
			return errors.Join(errA, errB)
		})
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}
