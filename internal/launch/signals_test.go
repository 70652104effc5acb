package launch

import (
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestRepeatWindow: the first signal asks for a stop; the same signal
// within repeatWindow of it is the same request; another signal, or the
// same one after the window, ends the process.
func TestRepeatWindow(t *testing.T) {
	const (
		term = syscall.SIGTERM
		cont = syscall.SIGCONT
		usr1 = syscall.SIGUSR1
		intr = syscall.SIGINT
	)
	type step struct {
		sig  syscall.Signal
		at   time.Duration // since the first signal
		exit bool
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"one signal", []step{{term, 0, false}}},
		{"Slurm's time limit", []step{{term, 0, false}, {cont, 5 * time.Millisecond, false}, {term, 10 * time.Millisecond, false}}},
		{"the SIGTERM repeated", []step{{term, 0, false}, {term, 10 * time.Millisecond, false}}},
		{"repeated at the window's end", []step{{term, 0, false}, {term, repeatWindow, false}}},
		{"repeated after the window", []step{{term, 0, false}, {term, repeatWindow + time.Millisecond, true}}},
		{"repeats count from the first", []step{{intr, 0, false}, {intr, time.Second, false}, {intr, repeatWindow + time.Second, true}}},
		{"another signal at once", []step{{term, 0, false}, {usr1, time.Millisecond, true}}},
		{"Ctrl-C after SIGUSR1", []step{{usr1, 0, false}, {intr, 3 * time.Second, true}}},
		{"the first signal is the request", []step{{usr1, 0, false}, {term, time.Millisecond, true}, {usr1, 2 * time.Millisecond, false}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r request
			t0 := time.Now()
			for i, s := range c.steps {
				if s.sig == cont {
					continue // not watched: Watch never sees it
				}
				if got := r.exitNow(s.sig, t0.Add(s.at)); got != s.exit {
					t.Errorf("signal %d (%v at %v): exit now %v, want %v", i, s.sig, s.at, got, s.exit)
				}
			}
		})
	}
}

// TestSlurmTimeLimit delivers Slurm 22.05's time-limit signals to the
// test process, SIGTERM, SIGCONT, SIGTERM, each once the one before
// arrived: the run is asked to stop by SIGTERM and goes on to its
// checkpoint. A SIGUSR1 after them is the second signal, and the first
// to end the process: the repeated SIGTERM, ahead of it in the watcher's
// queue, did not.
func TestSlurmTimeLimit(t *testing.T) {
	seen := make(chan os.Signal, 8)
	signal.Notify(seen, syscall.SIGTERM, syscall.SIGCONT, syscall.SIGUSR1)
	defer signal.Stop(seen)
	var stderr syncBuffer
	exits := make(chan ExitCode, 4)
	s := watch(&stderr, func(code ExitCode) { exits <- code })
	defer s.Stop()
	send := func(sig syscall.Signal) {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		// The watcher's channel has sig when the test's has: os/signal
		// hands each signal to every channel before the next.
		select {
		case got := <-seen:
			if got != sig {
				t.Fatalf("sent %v, received %v", sig, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v not delivered in 10 s", sig)
		}
	}
	send(syscall.SIGTERM)
	send(syscall.SIGCONT)
	send(syscall.SIGTERM)
	send(syscall.SIGUSR1)
	select {
	case code := <-exits:
		if code != ExitInterrupted {
			t.Errorf("exit %d, want %d", code, ExitInterrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SIGUSR1 after SIGTERM did not end the process in 10 s")
	}
	want := "scalegnn: second signal (SIGUSR1): exiting now, without a checkpoint\n"
	if got := stderr.String(); got != want {
		t.Errorf("stderr %q, want %q (the SIGTERM repeated within %v is the same request)", got, want, repeatWindow)
	}
	if got := s.Received(); got != "SIGTERM" {
		t.Errorf("Received() = %q, want SIGTERM", got)
	}
	select {
	case code := <-exits:
		t.Errorf("a second exit (%d)", code)
	default:
	}
}

// TestReceivedNone: no signal, no request.
func TestReceivedNone(t *testing.T) {
	s := watch(&syncBuffer{}, func(ExitCode) { t.Error("exit without a signal") })
	defer s.Stop()
	if got := s.Received(); got != "" {
		t.Errorf("Received() = %q before any signal", got)
	}
}

// syncBuffer is a strings.Builder the watcher's goroutine writes to while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestOnFirst: the hook is called once, with the first signal's name, as
// soon as it comes — before any step boundary asks Received — and not
// again for its repeat; a hook set after the signal is called at once.
func TestOnFirst(t *testing.T) {
	seen := make(chan os.Signal, 8)
	signal.Notify(seen, syscall.SIGUSR1)
	defer signal.Stop(seen)
	s := watch(&syncBuffer{}, func(ExitCode) { t.Error("exit on the first signal and its repeat") })
	defer s.Stop()
	calls := make(chan string, 4)
	s.OnFirst(func(name string) { calls <- name })
	for range 2 {
		if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		<-seen
	}
	select {
	case name := <-calls:
		if name != "SIGUSR1" {
			t.Errorf("hook called with %q, want SIGUSR1", name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first signal did not call the hook in 10 s")
	}
	late := make(chan string, 4)
	s.OnFirst(func(name string) { late <- name })
	time.Sleep(100 * time.Millisecond)
	select {
	case name := <-calls:
		t.Errorf("hook called again (%q) for the repeat", name)
	case name := <-late:
		t.Errorf("a second hook called (%q): the hook runs once", name)
	default:
	}

	// A hook set after the signal came is called at once.
	s2 := &Signals{ch: make(chan os.Signal), done: make(chan struct{})}
	s2.first.Store("SIGTERM")
	s2.OnFirst(func(name string) { late <- name })
	select {
	case name := <-late:
		if name != "SIGTERM" {
			t.Errorf("late hook called with %q, want SIGTERM", name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a hook set after the signal was not called")
	}
}
