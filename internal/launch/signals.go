package launch

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// repeatWindow is how long after the signal that asked a run to stop the
// same signal again is the same request, not a second one. At a job's
// time limit Slurm (22.05) sends SIGTERM, SIGCONT, SIGTERM about 10 ms
// apart, the SIGCONT to wake a stopped job between the two; the second
// SIGTERM must not end the run before its checkpoint. 2 s is far beyond
// those 10 ms on a loaded node, and short enough for a person: Ctrl-C
// again after it, or another signal at any time, ends the process at
// once.
const repeatWindow = 2 * time.Second

// Signals watches SIGTERM, SIGUSR1 and SIGINT for a training run: the
// first one is remembered for the ranks to agree on at the next step
// boundary (Slurm's time-limit SIGTERM, --signal=B:USR1@120, Ctrl-C). The
// same signal again within repeatWindow is the same request; another
// signal, or the same one later, ends the process at once with
// ExitInterrupted, without a checkpoint. OnFirst adds what to do at once
// on the first one.
type Signals struct {
	first atomic.Value // string: the first signal's name
	ch    chan os.Signal
	done  chan struct{}
	hook  atomic.Pointer[func(string)] // OnFirst's
	fired atomic.Bool                  // the hook was called
}

// Watch starts watching the signals; Stop ends it. stderr receives the
// line of a second signal.
func Watch(stderr io.Writer) *Signals {
	return watch(stderr, func(code ExitCode) { os.Exit(int(code)) })
}

// watch is Watch with the exit taken as a function, which a test records
// instead of exiting.
func watch(stderr io.Writer, exit func(ExitCode)) *Signals {
	// Room for the Slurm repeat and another signal behind it: os/signal
	// drops what does not fit while the watcher is busy.
	s := &Signals{ch: make(chan os.Signal, 4), done: make(chan struct{})}
	signal.Notify(s.ch, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGINT)
	go func() {
		var req request
		for {
			select {
			case <-s.done:
				return
			case sig := <-s.ch:
				name := signalName(sig)
				if !req.exitNow(sig, time.Now()) {
					if s.first.Load() == nil {
						s.first.Store(name)
						s.fire()
					}
					continue
				}
				fmt.Fprintf(stderr, "scalegnn: second signal (%s): exiting now, without a checkpoint\n", name)
				exit(ExitInterrupted)
			}
		}
	}()
	return s
}

// Received returns the first signal's name, or "" while none came.
func (s *Signals) Received() string {
	if v := s.first.Load(); v != nil {
		return v.(string)
	}
	return ""
}

// OnFirst has f called once with the first signal's name, as soon as it
// comes (at once when it came already), on its own goroutine: the step
// boundary where the ranks stop may come after the launcher's kill, and f
// records the request first (jobs.Job.Interrupting). A second signal still
// ends the process while f runs.
func (s *Signals) OnFirst(f func(name string)) {
	s.hook.Store(&f)
	s.fire()
}

// fire calls the hook when both it and the first signal are there, once.
func (s *Signals) fire() {
	h, name := s.hook.Load(), s.Received()
	if h != nil && name != "" && s.fired.CompareAndSwap(false, true) {
		go (*h)(name)
	}
}

// Stop stops watching: the signals take their default actions again.
func (s *Signals) Stop() {
	signal.Stop(s.ch)
	close(s.done)
}

// request is the watcher's state: the signal that asked the run to stop,
// and when it came.
type request struct {
	sig os.Signal // nil until the first signal
	at  time.Time
}

// exitNow takes signal sig, received at t, and says whether it ends the
// process at once: the first signal is the request (false), the same
// signal within repeatWindow of it is the request repeated (false), and
// any other signal, or the same one after the window, is a second signal
// (true).
func (r *request) exitNow(sig os.Signal, t time.Time) bool {
	if r.sig == nil {
		r.sig, r.at = sig, t
		return false
	}
	return sig != r.sig || t.Sub(r.at) > repeatWindow
}

func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGUSR1:
		return "SIGUSR1"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return sig.String()
}
