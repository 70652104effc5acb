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
		p := NewPrefetcher(func(step int) (int, error) {
			if running.Add(1) > 1 {
				t.Error("two builds at once")
			}
			defer running.Add(-1)
			time.Sleep(build)
			return step * step, nil
		}, 5, on)
		var waited time.Duration
		for i := 0; i < 6; i++ {
			got, wait, took, err := p.Next()
			if err != nil {
				t.Fatal(err)
			}
			if got != (5+i)*(5+i) {
				t.Fatalf("prefetch=%v: batch %d is %d, want %d", on, i, got, (5+i)*(5+i))
			}
			if took < build {
				t.Fatalf("build took %v, less than its %v sleep", took, build)
			}
			if i > 0 {
				waited += wait
			}
			time.Sleep(work)
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
	p := NewPrefetcher(func(step int) (int, error) {
		if step == 2 {
			return 0, bad
		}
		return step, nil
	}, 0, true)
	defer p.Close()
	for i := 0; i < 2; i++ {
		if _, _, _, err := p.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := p.Next(); !errors.Is(err, bad) {
		t.Fatalf("third batch: error %v, want %v", err, bad)
	}
}

// TestPrefetcherPanic: a build that panics, in the prefetching goroutine or
// not, comes back as an error naming the step.
func TestPrefetcherPanic(t *testing.T) {
	for _, on := range []bool{false, true} {
		p := NewPrefetcher(func(step int) (int, error) {
			if step == 1 {
				panic("index out of range")
			}
			return step, nil
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
