package sampler

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestPrefetcherOrderAndOverlap: batches come in step order either way;
// with prefetching the next batch is built while the caller works, so the
// wait is (nearly) zero when the work is longer than the build.
func TestPrefetcherOrderAndOverlap(t *testing.T) {
	const build, work = 20 * time.Millisecond, 40 * time.Millisecond
	for _, on := range []bool{false, true} {
		var running atomic.Int32
		p := NewPrefetcher(newBox, func(step int, dst *box) error {
			if running.Add(1) > 1 {
				t.Error("two builds at once")
			}
			defer running.Add(-1)
			time.Sleep(build)
			dst.v = step * step
			return nil
		}, 5, on)
		var waited time.Duration
		for i := 0; i < 6; i++ {
			got, wait, took, err := p.Next()
			if err != nil {
				t.Fatal(err)
			}
			if got.v != (5+i)*(5+i) {
				t.Fatalf("prefetch=%v: batch %d is %d, want %d", on, i, got.v, (5+i)*(5+i))
			}
			if took < build {
				t.Fatalf("build took %v, less than its %v sleep", took, build)
			}
			if i > 0 {
				waited += wait
			}
			time.Sleep(work)
			p.Release(got)
		}
		p.Close()
		if !on && waited < 5*build {
			t.Errorf("without prefetch the caller waited %v for 5 builds of %v", waited, build)
		}
		if on && waited > 5*build/2 {
			t.Errorf("with prefetch the caller still waited %v for 5 builds of %v", waited, build)
		}
	}
}

func TestPrefetcherError(t *testing.T) {
	bad := errors.New("disk on fire")
	p := NewPrefetcher(newBox, func(step int, dst *box) error {
		if step == 2 {
			return bad
		}
		dst.v = step
		return nil
	}, 0, true)
	defer p.Close()
	for i := 0; i < 2; i++ {
		if _, _, _, err := p.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if got, _, _, err := p.Next(); !errors.Is(err, bad) || got != nil {
		t.Fatalf("third batch: %v, error %v; want nil, %v", got, err, bad)
	}
	// Training goes on after a failed step: the next Next builds step 3.
	if got, _, _, err := p.Next(); err != nil || got.v != 3 {
		t.Fatalf("fourth batch: %v, error %v; want step 3", got, err)
	}
}

// TestPrefetcherPanic: a build that panics, in the prefetching goroutine or
// not, comes back as an error naming the step.
func TestPrefetcherPanic(t *testing.T) {
	for _, on := range []bool{false, true} {
		p := NewPrefetcher(newBox, func(step int, dst *box) error {
			if step == 1 {
				panic("index out of range")
			}
			dst.v = step
			return nil
		}, 0, on)
		if _, _, _, err := p.Next(); err != nil {
			t.Fatal(err)
		}
		_, _, _, err := p.Next()
		if err == nil || !strings.Contains(err.Error(), "step 1: index out of range") {
			t.Errorf("prefetch=%v: error %v, want the panic of step 1", on, err)
		}
		p.Close()
	}
}

// box is a test batch: the step it holds and a payload the builder writes
// whole, so that a build into an item the caller still reads is a data
// race (go test -race).
type box struct {
	v    int
	data [64]int
}

func newBox() *box { return new(box) }

// TestPrefetcherRecyclesItems: a caller that releases each batch after its
// step, or only after taking the next one, sees the right contents every
// step while the prefetcher builds into released items: two items in all
// (three for the late releaser, one without prefetching).
func TestPrefetcherRecyclesItems(t *testing.T) {
	for _, c := range []struct {
		prefetch, late bool
		items          int
	}{{false, false, 1}, {true, false, 2}, {true, true, 3}} {
		allocs := 0
		p := NewPrefetcher(func() *box { allocs++; return new(box) }, func(step int, dst *box) error {
			dst.v = step
			for i := range dst.data {
				dst.data[i] = step + i
			}
			return nil
		}, 3, c.prefetch)
		var held *box
		for i := 0; i < 40; i++ {
			got, _, _, err := p.Next()
			if err != nil {
				t.Fatal(err)
			}
			if c.late && held != nil {
				p.Release(held)
			}
			for j, d := range got.data {
				if got.v != 3+i || d != 3+i+j {
					t.Fatalf("%+v: step %d holds step %d's batch (element %d = %d)", c, 3+i, got.v, j, d)
				}
			}
			if c.late {
				held = got
			} else {
				p.Release(got)
			}
		}
		p.Close()
		if allocs != c.items {
			t.Errorf("%+v: %d items made, want %d", c, allocs, c.items)
		}
		// After Close the prefetched step is built again, in a free item.
		if got, _, _, err := p.Next(); err != nil || got.v != 43 {
			t.Errorf("%+v: after Close, step %v (error %v), want 43", c, got.v, err)
		}
		p.Close()
		if allocs != c.items {
			t.Errorf("%+v: after Close, %d items made, want %d", c, allocs, c.items)
		}
	}
}

// TestPrefetcherSteadyStateAllocatesNothing: Next and Release, hand-off to
// the worker included, allocate nothing once the items exist.
func TestPrefetcherSteadyStateAllocatesNothing(t *testing.T) {
	p := NewPrefetcher(newBox, func(step int, dst *box) error { dst.v = step; return nil }, 0, true)
	defer p.Close()
	step := func() {
		b, _, _, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		p.Release(b)
	}
	step()
	if allocs := testing.AllocsPerRun(50, step); allocs != 0 {
		t.Errorf("a prefetched step allocates %v times, want 0", allocs)
	}
}

// TestPrefetcherReleaseMisuse: releasing an item twice, or one the worker
// is building into, panics instead of handing one item to two steps.
func TestPrefetcherReleaseMisuse(t *testing.T) {
	panics := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	build := func(step int, dst *box) error { dst.v = step; return nil }
	p := NewPrefetcher(newBox, build, 0, false)
	a, _, _, _ := p.Next()
	p.Release(a)
	panics("a second Release", func() { p.Release(a) })

	q := NewPrefetcher(newBox, build, 0, true)
	defer q.Close()
	a, _, _, _ = q.Next()
	q.Release(a)
	q.Next() // prefetches into a
	panics("Release of the item being built", func() { q.Release(a) })
}
