package alloctest

import (
	"runtime"
	"sync"
)

// Meter is a barrier of n goroutines that reads the process's allocation
// count between its waits. It allocates nothing once made.
type Meter struct {
	mu     sync.Mutex
	cond   *sync.Cond
	n      int
	count  int
	gen    int
	before runtime.MemStats
	after  runtime.MemStats
}

// NewMeter returns a Meter for n goroutines.
func NewMeter(n int) *Meter {
	m := &Meter{n: n}
	m.cond = sync.NewCond(&m.mu)
	return m
}

// wait blocks until all n goroutines have called it; the last to arrive
// runs last before releasing the others.
func (m *Meter) wait(last func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	gen := m.gen
	m.count++
	if m.count == m.n {
		last()
		m.count = 0
		m.gen++
		m.cond.Broadcast()
		return
	}
	for gen == m.gen {
		m.cond.Wait()
	}
}

// GC waits for every goroutine and runs a garbage collection.
func (m *Meter) GC() { m.wait(runtime.GC) }

// Start waits for every goroutine and opens the window.
func (m *Meter) Start() { m.wait(m.readBefore) }

// Stop waits for every goroutine and closes the window.
func (m *Meter) Stop() { m.wait(m.readAfter) }

func (m *Meter) readBefore() { runtime.ReadMemStats(&m.before) }
func (m *Meter) readAfter()  { runtime.ReadMemStats(&m.after) }

// Mallocs returns the heap allocations of the process between the last
// Start and Stop.
func (m *Meter) Mallocs() uint64 { return m.after.Mallocs - m.before.Mallocs }
