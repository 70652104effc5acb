package par

import (
	"errors"
	"sync/atomic"
	"testing"
)

// caught calls fn and returns the value it panicked with, or nil.
func caught(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

type typed string // a typed panic value must reach the caller unchanged

func TestDoRepanicsOnCaller(t *testing.T) {
	errBad := errors.New("bad")
	cases := []struct {
		name   string
		n      int
		panics map[int]any // worker index → value it panics with
		want   any
	}{
		{"none", 4, nil, nil},
		{"zero workers", 0, nil, nil},
		{"one, on the caller", 1, map[int]any{0: typed("caller")}, typed("caller")},
		{"a goroutine", 4, map[int]any{1: typed("worker 1")}, typed("worker 1")},
		{"the caller's part", 4, map[int]any{3: errBad}, errBad},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ran atomic.Int64
			got := caught(func() {
				Do(c.n, func(i int) {
					defer ran.Add(1)
					if v, ok := c.panics[i]; ok {
						panic(v)
					}
				})
			})
			if got != c.want {
				t.Fatalf("panic value %v (%T), want %v (%T)", got, got, c.want, c.want)
			}
			if int(ran.Load()) != c.n {
				t.Fatalf("%d of %d functions ran before Do returned", ran.Load(), c.n)
			}
		})
	}
}

// TestWaitWaitsForWorkers: the caller's own panic is raised only after
// every worker has ended, so no worker writes into the caller's memory
// once the panic unwinds it.
func TestWaitWaitsForWorkers(t *testing.T) {
	release := make(chan struct{})
	var finished atomic.Bool
	var g Group
	g.Go(func() {
		<-release
		finished.Store(true)
	})
	g.Run(func() {
		close(release)
		panic(typed("caller"))
	})
	if v := caught(g.Wait); v != typed("caller") {
		t.Fatalf("Wait panicked with %v, want the caller's panic", v)
	}
	if !finished.Load() {
		t.Fatal("Wait panicked before the worker ended")
	}
}

func TestFirstKeepsTheFirstAndClears(t *testing.T) {
	var f First
	func() { defer f.Catch(); panic(typed("a")) }()
	func() { defer f.Catch(); panic(typed("b")) }()
	func() { defer f.Catch() }()
	if v := caught(f.Repanic); v != typed("a") {
		t.Fatalf("Repanic panicked with %v, want the first value a", v)
	}
	if v := caught(f.Repanic); v != nil {
		t.Fatalf("second Repanic panicked with %v, want nothing (cleared)", v)
	}
}

func TestInjectPanicFiresOnceInAGoroutine(t *testing.T) {
	InjectPanic(typed("injected"), 2)
	var ran [3]atomic.Bool // ran[k]: the one goroutine of the k-th Do ran fn
	for k := range ran {
		v := caught(func() {
			Do(2, func(i int) {
				if i == 0 {
					ran[k].Store(true)
				}
			})
		})
		var want any
		if k == 2 {
			want = typed("injected")
		}
		if v != want || ran[k].Load() != (want == nil) {
			t.Fatalf("goroutine %d: panic %v, ran its function %v; want the fault only in goroutine 2 (after skipping 2)", k, v, ran[k].Load())
		}
	}
	if v := caught(func() { Do(2, func(int) {}) }); v != nil {
		t.Fatalf("fault fired twice: %v", v)
	}
}
