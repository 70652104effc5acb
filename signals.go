package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// signals watches SIGTERM, SIGUSR1 and SIGINT for a training run: the
// first one is remembered for the ranks to agree on at the next step
// boundary (Slurm's time-limit SIGTERM, --signal=B:USR1@120, Ctrl-C);
// a second one ends the process at once with exitInterrupted.
type signals struct {
	first atomic.Value // string: the first signal's name
	ch    chan os.Signal
	done  chan struct{}
}

func watchSignals(stderr io.Writer) *signals {
	s := &signals{ch: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(s.ch, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGINT)
	go func() {
		for {
			select {
			case <-s.done:
				return
			case sig := <-s.ch:
				name := signalName(sig)
				if s.first.Load() == nil {
					s.first.Store(name)
					continue
				}
				fmt.Fprintf(stderr, "scalegnn: second signal (%s): exiting now, without a checkpoint\n", name)
				os.Exit(exitInterrupted)
			}
		}
	}()
	return s
}

// received returns the first signal's name, or "" while none came.
func (s *signals) received() string {
	if v := s.first.Load(); v != nil {
		return v.(string)
	}
	return ""
}

func (s *signals) stop() {
	signal.Stop(s.ch)
	close(s.done)
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
