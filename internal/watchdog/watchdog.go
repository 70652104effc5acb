package watchdog

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// keep is how many recent durations of each kind the median is taken over.
const keep = 63

// stage is what a rank is doing between two reports of progress.
type stage struct {
	kind  Kind
	label string
}

// Watchdog watches one rank. Enter names the work the rank starts, Done
// reports its completion (progress), and Comm labels the collectives; a
// goroutine started by Start calls the abort function once, with a
// one-line message, when the rank has made no progress for longer than
// the policy allows. The methods are safe for concurrent use; those of a
// nil *Watchdog (runtime.stall_timeout = "off") do nothing.
type Watchdog struct {
	rank   int
	policy Policy
	abort  func(msg string)

	stage atomic.Pointer[stage]
	op    atomic.Pointer[string] // the collective in progress, or nil
	last  atomic.Int64           // time of the last progress, UnixNano

	mu     sync.Mutex
	recent [nKinds][]time.Duration

	fired    atomic.Bool
	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// New returns the watchdog of rank, which calls abort(msg) when the rank
// stalls. abort must end the job (world.Abort after printing msg); in a
// test it may record msg instead. The rank starts in stage Load,
// "loading"; the clock starts now.
func New(rank int, p Policy, abort func(msg string)) *Watchdog {
	if abort == nil {
		panic("watchdog: New: nil abort function")
	}
	if p.Fixed <= 0 && (p.First <= 0 || p.Floor <= 0 || p.Multiple <= 0) {
		panic(fmt.Sprintf("watchdog: New: policy %+v: need Fixed > 0, or First, Floor and Multiple > 0", p))
	}
	w := &Watchdog{rank: rank, policy: p, abort: abort, stop: make(chan struct{}), done: make(chan struct{})}
	w.stage.Store(&stage{Load, "loading"})
	w.last.Store(time.Now().UnixNano())
	return w
}

// Start starts watching in a goroutine of its own; Stop ends it.
func (w *Watchdog) Start() {
	go func() {
		defer close(w.done)
		t := time.NewTicker(w.policy.tick())
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case now := <-t.C:
				if msg, stalled := w.check(now); stalled && w.fired.CompareAndSwap(false, true) {
					w.abort(msg)
					return
				}
			}
		}
	}()
}

// Stop stops watching and waits for the watching goroutine to end. It may
// be called more than once, and without Start.
func (w *Watchdog) Stop() {
	if w == nil {
		return
	}
	w.stopOnce.Do(func() { close(w.stop) })
	select {
	case <-w.done:
	case <-time.After(time.Second): // never started, or aborting
	}
}

// Enter names the work the rank starts now, e.g. Enter(Step, "epoch 3
// step 7"). It does not count as progress: the clock runs from the last
// Done.
func (w *Watchdog) Enter(k Kind, label string) {
	if w == nil {
		return
	}
	w.stage.Store(&stage{k, label})
}

// Done reports that the work named by the last Enter has completed: the
// clock restarts, and the time since the previous progress joins the
// history of the work's kind that the adaptive limit is computed from.
func (w *Watchdog) Done() {
	if w == nil {
		return
	}
	now := time.Now().UnixNano()
	took := time.Duration(now - w.last.Swap(now))
	k := w.stage.Load().kind
	w.mu.Lock()
	r := append(w.recent[k], took)
	if len(r) > keep {
		r = r[len(r)-keep:]
	}
	w.recent[k] = r
	w.mu.Unlock()
}

// Loaded reports a piece of the load done, what naming it (a file of a
// prepared dataset, a stage of an in-memory one): progress, as Done, after
// which the stage says what came last, "loading (after adj0/b0_1.npy)".
// A stall while loading then names the piece after which it stopped.
func (w *Watchdog) Loaded(what string) {
	if w == nil {
		return
	}
	w.Enter(Load, "loading (after "+what+")")
	w.Done()
}

// Stage returns what the rank is doing: the work's label and, while it is
// in a collective, the collective, e.g. "epoch 3 step 7: all-reduce on the
// Y communicator".
func (w *Watchdog) Stage() string {
	s := w.stage.Load().label
	if op := w.op.Load(); op != nil {
		s += ": " + *op
	}
	return s
}

// check reports whether the rank has waited longer than its limit at time
// now, and the message that says so.
func (w *Watchdog) check(now time.Time) (string, bool) {
	waited := now.Sub(time.Unix(0, w.last.Load()))
	k := w.stage.Load().kind
	w.mu.Lock()
	limit, why := w.policy.limit(k, w.recent[k])
	w.mu.Unlock()
	if waited <= limit {
		return "", false
	}
	return fmt.Sprintf("rank %d: no progress for %v in %s (%s): ending the job",
		w.rank, waited.Round(100*time.Millisecond), w.Stage(), why), true
}

// Recover, deferred at the top of a goroutine, turns the goroutine's
// panic into the end of the job with one line (the stage, the goroutine
// and the panic value) instead of Go's bare trace of every goroutine.
// SCALEGNN_TRACEBACK=1 in the environment adds this goroutine's stack, as
// for the main goroutine's panics.
func (w *Watchdog) Recover(goroutine string) {
	v := recover()
	if v == nil {
		return
	}
	msg := fmt.Sprintf("rank %d: internal error in %s during %s: %v (set SCALEGNN_TRACEBACK=1 for a stack trace)", w.rank, goroutine, w.Stage(), v)
	if traceback() {
		msg += "\n" + string(debug.Stack())
	}
	if w.fired.CompareAndSwap(false, true) {
		w.abort(msg)
	}
}
