package sampler

import (
	"fmt"
	"time"
)

// Prefetcher hands out the batches of consecutive steps, built into
// reusable items. With prefetching on, the batch of step t+1 is built in a
// worker goroutine while the caller trains on step t — across epoch
// boundaries too, since steps simply count on; off, each batch is built
// when it is asked for.
//
// The caller gives each item back with Release once it no longer reads it;
// the next builds reuse released items, so a caller that releases every
// item before asking for the one after next keeps two items (three if it
// releases after the next Next) and allocates nothing in a steady state.
// An item not released is simply not reused. Not safe for concurrent use:
// Next, Release and Close belong to one goroutine.
type Prefetcher[T comparable] struct {
	alloc    func() T
	build    func(step int, dst T) error
	step     int
	prefetch bool

	free []T // released items, at most maxFree

	// The worker goroutine, started with the first prefetch: it builds
	// each request and answers on done. Both channels are made once.
	req      chan request[T]
	done     chan built[T]
	pending  bool // a build is under way
	building T    // its item
}

// maxFree is how many released items a Prefetcher keeps: one being
// trained on, one being built and a spare.
const maxFree = 3

type request[T any] struct {
	step int
	dst  T
}

type built[T any] struct {
	item T
	took time.Duration
	err  error
}

// NewPrefetcher returns a Prefetcher whose first batch is built by
// build(first, item), with items from alloc when none is free. build must
// overwrite all of an item that the caller reads: items come back with
// the contents of an earlier step.
func NewPrefetcher[T comparable](alloc func() T, build func(step int, dst T) error, first int, prefetch bool) *Prefetcher[T] {
	return &Prefetcher[T]{alloc: alloc, build: build, step: first, prefetch: prefetch, free: make([]T, 0, maxFree)}
}

// Next returns the next step's batch, how long the caller waited for it,
// and how long building it took (with prefetching, took − wait was hidden
// behind training). After an error the item is kept for reuse and the zero
// T returned.
func (p *Prefetcher[T]) Next() (item T, wait, took time.Duration, err error) {
	t0 := time.Now()
	var b built[T]
	if p.pending {
		b = <-p.done
		p.pending = false
		var zero T
		p.building = zero
	} else {
		b = p.run(p.step, p.take())
	}
	wait = time.Since(t0)
	p.step++
	if b.err != nil {
		p.Release(b.item)
		var zero T
		return zero, wait, b.took, b.err
	}
	if p.prefetch {
		if p.req == nil {
			p.req, p.done = make(chan request[T], 1), make(chan built[T], 1)
			go p.work(p.req, p.done)
		}
		p.building = p.take()
		p.pending = true
		p.req <- request[T]{p.step, p.building}
	}
	return b.item, wait, b.took, nil
}

// Release gives back an item that Next returned, once the caller no
// longer reads it. A released item is left alone until the next call to
// Next, which may start building into it; so releasing right after the
// last read of the step, before asking for the next batch, is what keeps
// the items at two. Releasing an item twice, or one being built, panics.
func (p *Prefetcher[T]) Release(item T) {
	if p.pending && item == p.building {
		panic("sampler: Release of the batch being prefetched")
	}
	for _, f := range p.free {
		if f == item {
			panic("sampler: Release of a batch already released")
		}
	}
	if len(p.free) < cap(p.free) {
		p.free = append(p.free, item)
	}
}

// take returns a free item, or a new one when none is.
func (p *Prefetcher[T]) take() T {
	if n := len(p.free); n > 0 {
		item := p.free[n-1]
		p.free = p.free[:n-1]
		return item
	}
	return p.alloc()
}

// work builds what it is asked for until req is closed.
func (p *Prefetcher[T]) work(req <-chan request[T], done chan<- built[T]) {
	for r := range req {
		done <- p.run(r.step, r.dst)
	}
}

// run builds one batch into dst. A panic in build becomes the batch's
// error: a prefetching goroutine that panicked would otherwise end the
// process with a stack trace instead of the job's one-line failure.
func (p *Prefetcher[T]) run(step int, dst T) (b built[T]) {
	t0 := time.Now()
	defer func() {
		if v := recover(); v != nil {
			b = built[T]{item: dst, took: time.Since(t0), err: fmt.Errorf("sampler: building the batch of step %d: %v", step, v)}
		}
	}()
	err := p.build(step, dst)
	return built[T]{dst, time.Since(t0), err}
}

// Close waits for a build under way and stops the worker, so that no
// goroutine outlives the training loop. The prefetched batch goes back to
// the free items; a later Next builds anew the step it would have returned.
func (p *Prefetcher[T]) Close() {
	if p.pending {
		b := <-p.done
		p.pending = false
		var zero T
		p.building = zero
		p.Release(b.item)
	}
	if p.req != nil {
		close(p.req)
		p.req, p.done = nil, nil
	}
}
