package par

import (
	"sync"
	"sync/atomic"
)

// First keeps the first panic of the goroutines that defer its Catch,
// for the caller to re-panic with Repanic once they have all ended. The
// zero value is ready to use.
type First struct {
	mu       sync.Mutex
	v        any
	panicked bool
}

// Catch, deferred directly at the top of a worker's function, recovers
// the worker's panic and keeps its value if it is the first.
func (f *First) Catch() {
	if v := recover(); v != nil {
		f.keep(v)
	}
}

func (f *First) keep(v any) {
	f.mu.Lock()
	if !f.panicked {
		f.v, f.panicked = v, true
	}
	f.mu.Unlock()
}

// Repanic panics with the first value caught since the last Repanic, on
// the calling goroutine, and does nothing when no worker panicked. Call
// it after every worker has ended (their memory is the caller's again).
func (f *First) Repanic() {
	f.mu.Lock()
	v, panicked := f.v, f.panicked
	f.v, f.panicked = nil, false
	f.mu.Unlock()
	if panicked {
		panic(v)
	}
}

// Group runs functions on goroutines of their own (Go) or on the caller
// (Run) and waits for them (Wait), which re-panics the first panic of any
// of them on the caller. A Group is used once; the zero value is ready.
type Group struct {
	wg    sync.WaitGroup
	first First
}

// Go runs fn on a new goroutine.
func (g *Group) Go(fn func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer g.first.Catch()
		Injected()
		fn()
	}()
}

// Run runs fn on the calling goroutine; a panic in it is kept like a
// worker's, so that Wait still waits for the workers before panicking.
func (g *Group) Run(fn func()) {
	defer g.first.Catch()
	fn()
}

// Wait waits for the goroutines started by Go, then panics with the first
// value that fn of Go or Run panicked with, if any.
func (g *Group) Wait() {
	g.wg.Wait()
	g.first.Repanic()
}

// Do runs fn(0), …, fn(n−1) concurrently, fn(n−1) on the caller, and
// returns when all have returned, or panics with the first panic.
func Do(n int, fn func(i int)) {
	var g Group
	for i := range n - 1 {
		g.Go(func() { fn(i) })
	}
	if n > 0 {
		g.Run(func() { fn(n - 1) })
	}
	g.Wait()
}

// armed is a fault set by InjectPanic: the goroutine that finds left at
// zero panics with v.
type armed struct {
	v    any
	left atomic.Int64
}

// fault is the armed fault, or nil.
var fault atomic.Pointer[armed]

// InjectPanic arms a one-shot fault: the worker goroutine that starts
// after skip others panics with v before running its function (a
// goroutine of a Group, or a task of a pool that calls Injected). It exists
// for end-to-end tests of this path (the test binary re-run as scalegnn,
// whose training must then end with one line); nothing else calls it, and
// unarmed it costs one atomic load per goroutine started.
func InjectPanic(v any, skip int) {
	f := &armed{v: v}
	f.left.Store(int64(skip))
	fault.Store(f)
}

// Injected panics with the armed fault when its turn has come. Group's
// goroutines call it; so does each task of a pool of long-lived workers
// (package device), under the worker's First.Catch.
func Injected() {
	f := fault.Load()
	if f == nil || f.left.Add(-1) != -1 {
		return
	}
	fault.CompareAndSwap(f, nil)
	panic(f.v)
}
