package collectives

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
)

// ErrAborted is returned (wrapped; test with errors.Is) by every collective
// of a Local world after the world has been aborted, by Abort or by a rank
// of RunLocal that failed, so that no rank blocks forever on a peer that
// gave up.
var ErrAborted = errors.New("collectives: job aborted")

// NewLocalWorld returns the world communicators of an in-process job of n
// ranks, one per rank: element r is rank r's Comm. Goroutines play the
// ranks; each must use only its own Comm (and the communicators split from
// it), from one goroutine at a time. Data moves between ranks by copying:
// a rank reads its peers' inputs in place during a blocking collective
// (which returns only once every peer has read its own), and a copy made
// at the call for a nonblocking one; no rank ever writes a peer's memory.
// Once warm, a collective allocates nothing (see local_round.go).
//
// Local supports every method of Comm. Reductions are computed in rank
// order (rank 0 op rank 1 op ...), so their results are bitwise identical
// on every rank and from run to run. Abort does not end the process: it
// aborts the world, after which every collective of every communicator of
// the world returns an error wrapping ErrAborted.
//
// Local is stricter than MPI: it checks that every rank calls the same
// collective with the same reduction operator, root and sizes, and returns
// an error on every rank of the group when they disagree.
func NewLocalWorld(n int) []Comm {
	if n < 1 {
		panic(fmt.Sprintf("collectives: NewLocalWorld(%d): need at least one rank", n))
	}
	w := newWorld(n)
	members := make([]int, n)
	for i := range members {
		members[i] = i
	}
	g := newGroup(w, members)
	comms := make([]Comm, n)
	for r := range comms {
		comms[r] = &localComm{g: g, rank: r}
	}
	return comms
}

// RunLocal runs fn on n goroutines, one per rank of a new Local world, and
// returns when every one has returned, with errs[r] the error of rank r.
//
// When a rank's fn returns an error or panics (the panic is recovered into
// an error that holds the panic value and the stack), the world is aborted:
// every collective that another rank is blocked in, or calls later, returns
// an error wrapping ErrAborted, so a failing test does not hang. When a rank
// returns normally while a peer waits for it in a collective it never
// joined, the world is aborted too and the waiting rank gets an error naming
// both ranks.
func RunLocal(n int, fn func(c Comm) error) []error {
	comms := NewLocalWorld(n)
	w := comms[0].(*localComm).g.w
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := runRank(r, comms[r], fn)
			if err != nil {
				// The first line says why; a panic's stack stays with
				// the rank that panicked.
				msg, _, _ := strings.Cut(err.Error(), "\n")
				w.abort(fmt.Errorf("rank %d failed: %s", r, msg))
			}
			errs[r] = err
			w.exit(r)
		}()
	}
	wg.Wait()
	return errs
}

// runRank calls fn for rank r and turns a panic into an error.
func runRank(r int, c Comm, fn func(c Comm) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("collectives: rank %d panicked: %v\n%s", r, v, debug.Stack())
		}
	}()
	return fn(c)
}

// world is the state that every communicator of one Local job shares: the
// abort flag and which ranks have returned from RunLocal's fn.
type world struct {
	// aborted is closed when the world is aborted; abortErr, written once
	// before the close, says why.
	aborted   chan struct{}
	abortOnce sync.Once
	abortErr  error

	mu     sync.Mutex
	exited []bool
	// groups are the world's communicators, whose doorbells an abort or
	// an exit rings, so that waiting ranks look whether the peer they
	// wait for is gone.
	groups []*group
}

func newWorld(n int) *world {
	return &world{
		aborted: make(chan struct{}),
		exited:  make([]bool, n),
	}
}

// abort aborts the world for the given reason; only the first reason is
// kept.
func (w *world) abort(reason error) {
	w.abortOnce.Do(func() {
		w.abortErr = fmt.Errorf("%w: %v", ErrAborted, reason)
		close(w.aborted)
		w.ringAll()
	})
}

// ringAll rings the doorbell of every member of every group of the world.
func (w *world) ringAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, g := range w.groups {
		g.ring()
	}
}

// abortError returns the reason of the abort, or nil if the world is not
// aborted.
func (w *world) abortError() error {
	select {
	case <-w.aborted:
		return w.abortErr
	default:
		return nil
	}
}

// exit records that world rank r has returned from its fn.
func (w *world) exit(r int) {
	w.mu.Lock()
	w.exited[r] = true
	w.mu.Unlock()
	w.ringAll()
}

// hasExited reports whether world rank r has returned from its fn.
func (w *world) hasExited(r int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.exited[r]
}
