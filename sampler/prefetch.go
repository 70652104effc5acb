package sampler

import (
	"fmt"
	"time"
)

// Prefetcher hands out the batches of consecutive steps. With prefetching
// on, the batch of step t+1 is built in a goroutine while the caller trains
// on step t — across epoch boundaries too, since steps simply count on;
// off, each batch is built when it is asked for. Not safe for concurrent
// use.
type Prefetcher[T any] struct {
	build    func(step int) (T, error)
	step     int
	prefetch bool
	pending  chan built[T] // the build under way, nil if none
}

type built[T any] struct {
	item T
	took time.Duration
	err  error
}

// NewPrefetcher returns a Prefetcher whose first batch is build(first).
func NewPrefetcher[T any](build func(step int) (T, error), first int, prefetch bool) *Prefetcher[T] {
	return &Prefetcher[T]{build: build, step: first, prefetch: prefetch}
}

// Next returns the next step's batch, how long the caller waited for it,
// and how long building it took (with prefetching, took − wait was hidden
// behind training).
func (p *Prefetcher[T]) Next() (item T, wait, took time.Duration, err error) {
	t0 := time.Now()
	var b built[T]
	if p.pending != nil {
		b = <-p.pending
		p.pending = nil
	} else {
		b = p.run(p.step)
	}
	wait = time.Since(t0)
	p.step++
	if p.prefetch && b.err == nil {
		ch := make(chan built[T], 1)
		step := p.step
		go func() { ch <- p.run(step) }()
		p.pending = ch
	}
	return b.item, wait, b.took, b.err
}

// run builds one batch. A panic in build becomes the batch's error: a
// prefetching goroutine that panicked would otherwise end the process with
// a stack trace instead of the job's one-line failure.
func (p *Prefetcher[T]) run(step int) (b built[T]) {
	t0 := time.Now()
	defer func() {
		if v := recover(); v != nil {
			b = built[T]{took: time.Since(t0), err: fmt.Errorf("sampler: building the batch of step %d: %v", step, v)}
		}
	}()
	item, err := p.build(step)
	return built[T]{item, time.Since(t0), err}
}

// Close waits for a build under way, so that no goroutine outlives the
// training loop.
func (p *Prefetcher[T]) Close() {
	if p.pending != nil {
		<-p.pending
		p.pending = nil
	}
}
