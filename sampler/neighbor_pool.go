package sampler

import (
	"sync"

	"scalegnn/internal/par"
)

// rangeJob is one pass of a layer split over a samplePool: run handles
// rows [lo, hi) on worker w (0..threads-1), which picks w's scratch.
type rangeJob interface{ run(lo, hi, w int) }

// minParallelEdges is the number of sampled edges below which a pass runs
// on the calling goroutine: waking the workers costs microseconds, about
// what sampling a few thousand edges does.
const minParallelEdges = 1 << 12

// samplePool is a fixed set of worker goroutines that split a pass over
// a layer's rows into contiguous parts, the last part on the caller. It
// is the pattern of package device's pool: handing out a pass is a
// channel send and a pointer, not a new goroutine, so a steady state
// allocates nothing; a panic in a part is raised on the caller once every
// part has ended (package par).
type samplePool struct {
	wake   []chan struct{}
	wg     sync.WaitGroup
	j      rangeJob
	total  int
	parts  int
	caught par.First
	once   sync.Once
}

// newSamplePool starts threads−1 workers.
func newSamplePool(threads int) *samplePool {
	p := &samplePool{wake: make([]chan struct{}, threads-1)}
	for k := range p.wake {
		p.wake[k] = make(chan struct{})
		go p.worker(k)
	}
	return p
}

func (p *samplePool) threads() int { return len(p.wake) + 1 }

func (p *samplePool) worker(k int) {
	for range p.wake[k] {
		p.part(p.j, p.total*k/p.parts, p.total*(k+1)/p.parts, k, true)
		p.wg.Done()
	}
}

// part runs [lo, hi) of j, keeping a panic for run to raise.
func (p *samplePool) part(j rangeJob, lo, hi, w int, worker bool) {
	defer p.caught.Catch()
	if worker {
		par.Injected()
	}
	if lo < hi {
		j.run(lo, hi, w)
	}
}

// run runs j over rows [0, total); edges is the work of the pass, which
// decides whether it is worth splitting. The split depends only on total
// and the thread count, and every row is written by exactly one part, so
// the result does not depend on the schedule.
func (p *samplePool) run(j rangeJob, total int, edges int64) {
	parts := min(p.threads(), total)
	if edges < minParallelEdges {
		parts = 1
	}
	if parts <= 1 {
		if total > 0 {
			j.run(0, total, 0)
		}
		return
	}
	p.j, p.total, p.parts = j, total, parts
	p.wg.Add(parts - 1)
	for k := range parts - 1 {
		p.wake[k] <- struct{}{}
	}
	p.part(j, total*(parts-1)/parts, total, parts-1, false)
	p.wg.Wait()
	p.j = nil // the pool must not keep the sampler alive (see NewNeighborSampler)
	p.caught.Repanic()
}

// close stops the workers; later calls do nothing.
func (p *samplePool) close() {
	p.once.Do(func() {
		for _, c := range p.wake {
			close(c)
		}
	})
}
