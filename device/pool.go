package device

import (
	"runtime"
	"sync"

	"scalegnn/internal/par"
)

// job is one operation split over a pool: run handles [lo, hi) of its range.
type job interface{ run(lo, hi int) }

// minParallel is the number of elements below which an operation runs on
// the calling goroutine: waking the workers costs microseconds, as much
// as a pass over 32k floats.
const minParallel = 1 << 15

// pool is a fixed set of worker goroutines that split one job's range into
// contiguous parts, the last part on the caller. Handing out a job costs
// no allocation: the job is a pointer to a struct the device owns and the
// workers are woken by channel sends, not new goroutines, so operations
// on preallocated buffers allocate nothing. The caller serialises jobs.
// A panic in a part is raised on the caller once every part has ended
// (package par), never as a bare crash of a worker.
type pool struct {
	wake   []chan struct{}
	wg     sync.WaitGroup
	j      job
	total  int
	parts  int
	caught par.First
}

// newPool starts threads−1 workers; threads <= 0 means GOMAXPROCS.
func newPool(threads int) *pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	p := &pool{wake: make([]chan struct{}, threads-1)}
	for k := range p.wake {
		p.wake[k] = make(chan struct{})
		go p.worker(k)
	}
	return p
}

func (p *pool) threads() int { return len(p.wake) + 1 }

func (p *pool) worker(k int) {
	for range p.wake[k] {
		p.part(p.j, p.total*k/p.parts, p.total*(k+1)/p.parts, true)
		p.wg.Done()
	}
}

// part runs [lo, hi) of j on a worker or on the caller, keeping a panic
// for run to raise. A worker's part is where par.InjectPanic's test
// fault can fire.
func (p *pool) part(j job, lo, hi int, worker bool) {
	defer p.caught.Catch()
	if worker {
		par.Injected()
	}
	if lo < hi {
		j.run(lo, hi)
	}
}

// run runs j over [0, total); work is the number of elements the job
// touches, which decides whether it is worth splitting.
func (p *pool) run(j job, total, work int) {
	parts := min(p.threads(), total)
	if work < minParallel {
		parts = 1
	}
	if parts <= 1 {
		if total > 0 {
			j.run(0, total)
		}
		return
	}
	p.j, p.total, p.parts = j, total, parts
	p.wg.Add(parts - 1)
	for k := range parts - 1 {
		p.wake[k] <- struct{}{}
	}
	p.part(j, total*(parts-1)/parts, total, false)
	p.wg.Wait()
	p.j = nil // the pool must not keep the device alive (see NewCPU)
	p.caught.Repanic()
}

// close stops the workers.
func (p *pool) close() {
	for _, c := range p.wake {
		close(c)
	}
}
