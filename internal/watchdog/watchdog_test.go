package watchdog

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"scalegnn/collectives"
	"scalegnn/grid"
)

// TestConformance runs the collectives conformance suite on wrapped Local
// communicators: the wrapper must change nothing.
func TestConformance(t *testing.T) {
	for _, n := range []int{1, 3, 8} {
		errs := collectives.RunLocal(n, func(c collectives.Comm) error {
			w := New(c.Rank(), DefaultPolicy(), func(msg string) { t.Errorf("watchdog fired: %s", msg) })
			return collectives.Conformance(w.Wrap(c, "world"))
		})
		for r, err := range errs {
			if err != nil {
				t.Errorf("%d ranks: rank %d: %v", n, r, err)
			}
		}
	}
}

// TestStalledRank runs a 2x2x1 grid of Local ranks over wrapped worlds:
// every step all-reduces on the Y, then the X communicator; in the third
// step rank 3 never joins. Every watchdog must fire within the timeout
// (plus scheduling slack), naming its rank, the stage and the
// communicator it waits in; rank 3's (not in a collective, and making no
// progress either) names its own stage.
func TestStalledRank(t *testing.T) {
	const (
		n       = 4
		timeout = 300 * time.Millisecond
		slack   = 2 * time.Second // the machine may be busy
	)
	worlds := collectives.NewLocalWorld(n)
	type fire struct {
		rank int
		msg  string
		at   time.Time
	}
	fired := make(chan fire, n)
	block := make(chan struct{})
	stallStart := make([]time.Time, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := New(r, FixedPolicy(timeout), func(msg string) { fired <- fire{r, msg, time.Now()} })
			w.Start()
			defer w.Stop()
			g, err := grid.New(w.Wrap(worlds[r], "world"), grid.Shape{D: 1, X: 2, Y: 2, Z: 1})
			if err != nil {
				errs[r] = err
				return
			}
			w.Done() // loaded
			buf := make([]float32, 4)
			for step := range 3 {
				w.Enter(Step, fmt.Sprintf("epoch 2 step %d", step+4))
				if step == 2 {
					stallStart[r] = time.Now()
					if r == 3 {
						<-block // stalled: never joins
						return
					}
				}
				for _, c := range []collectives.Comm{g.YComm, g.XComm} {
					if err := c.AllReduceF32(buf, collectives.Sum); err != nil {
						errs[r] = err
						return
					}
				}
				w.Done()
			}
		}()
	}
	got := map[int]fire{}
	deadline := time.After(timeout + slack)
	for len(got) < n {
		select {
		case f := <-fired:
			got[f.rank] = f
		case <-deadline:
			t.Errorf("after %v only ranks %v fired", timeout+slack, got)
			goto release
		}
	}
release:
	worlds[0].Abort(1) // releases the ranks blocked in the all-reduce
	close(block)
	wg.Wait()
	for r, f := range got {
		// Rank 2 waits for rank 3 in the Y all-reduce; ranks 0 and 1 pass
		// theirs and wait in the X all-reduce for ranks 2 and 3.
		want := map[int]string{
			0: "epoch 2 step 6: all-reduce on the X communicator",
			1: "epoch 2 step 6: all-reduce on the X communicator",
			2: "epoch 2 step 6: all-reduce on the Y communicator",
			3: "epoch 2 step 6 (runtime",
		}[r]
		for _, s := range []string{fmt.Sprintf("rank %d: no progress for ", r), want, "runtime.stall_timeout = 300ms", "ending the job"} {
			if !strings.Contains(f.msg, s) {
				t.Errorf("rank %d: message %q does not contain %q", r, f.msg, s)
			}
		}
		if strings.Contains(f.msg, "\n") {
			t.Errorf("rank %d: message %q is not one line", r, f.msg)
		}
		if wait := f.at.Sub(stallStart[r]); wait < timeout || wait > timeout+slack {
			t.Errorf("rank %d fired %v after the stall, want within [%v, %v]", r, wait, timeout, timeout+slack)
		}
	}
	for r, err := range errs {
		if err != nil && !errors.Is(err, collectives.ErrAborted) {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// TestHealthyNeverFires: ranks that make progress more often than the
// limit are never stopped, however long they run in total.
func TestHealthyNeverFires(t *testing.T) {
	errs := collectives.RunLocal(3, func(c collectives.Comm) error {
		w := New(c.Rank(), FixedPolicy(400*time.Millisecond), func(msg string) { t.Errorf("healthy rank stopped: %s", msg) })
		w.Start()
		defer w.Stop()
		wc := w.Wrap(c, "world")
		w.Done()
		buf := []float64{1}
		for step := range 12 { // 1.2 s in all, three limits
			w.Enter(Step, fmt.Sprintf("step %d", step))
			time.Sleep(100 * time.Millisecond)
			if err := wc.AllReduceF64(buf, collectives.Sum); err != nil {
				return err
			}
			w.Done()
		}
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// TestStageLabels: the stage names the collective only while the rank is
// in it, and a split communicator is relabelled by SetName.
func TestStageLabels(t *testing.T) {
	w := New(5, DefaultPolicy(), func(string) {})
	c := w.Wrap(collectives.NewLocalWorld(1)[0], "world")
	w.Enter(Eval, "epoch 4 evaluation")
	if got, want := w.Stage(), "epoch 4 evaluation"; got != want {
		t.Errorf("Stage() = %q, want %q", got, want)
	}
	prev := c.enter(opBcast)
	if got, want := w.Stage(), "epoch 4 evaluation: broadcast on the world communicator"; got != want {
		t.Errorf("in a broadcast: Stage() = %q, want %q", got, want)
	}
	c.leave(opBcast, prev)
	s, err := c.Split(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.(*Comm).SetName("X")
	r, err := s.IAllReduceF32([]float32{1}, collectives.Sum)
	if err != nil {
		t.Fatal(err)
	}
	q := r.(*request)
	prev = q.c.enter(opAllReduceWait)
	if got, want := w.Stage(), "epoch 4 evaluation: wait for a nonblocking all-reduce on the X communicator"; got != want {
		t.Errorf("waiting: Stage() = %q, want %q", got, want)
	}
	q.c.leave(opAllReduceWait, prev)
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := w.Stage(), "epoch 4 evaluation"; got != want {
		t.Errorf("after the wait: Stage() = %q, want %q", got, want)
	}
}

// TestRecover: a goroutine's panic ends the job once, with one line naming
// the rank, the goroutine, the stage and the value.
func TestRecover(t *testing.T) {
	var msgs []string
	var mu sync.Mutex
	w := New(2, DefaultPolicy(), func(msg string) { mu.Lock(); msgs = append(msgs, msg); mu.Unlock() })
	w.Enter(Step, "epoch 1 step 0")
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Recover("the prefetcher")
			panic("index out of range [7] with length 7")
		}()
	}
	wg.Wait()
	if len(msgs) != 1 {
		t.Fatalf("abort called %d times (%q), want once", len(msgs), msgs)
	}
	want := "rank 2: internal error in the prefetcher during epoch 1 step 0: index out of range [7] with length 7"
	if !strings.HasPrefix(msgs[0], want) || strings.Contains(msgs[0], "\n") {
		t.Errorf("message %q: want one line starting %q", msgs[0], want)
	}
}

// TestLoadedIsProgress: every piece of a load restarts the clock, so a
// load longer than the limit passes when its pieces are shorter, and a
// stall after a piece names it.
func TestLoadedIsProgress(t *testing.T) {
	var mu sync.Mutex
	var msgs []string
	w := New(1, FixedPolicy(300*time.Millisecond), func(msg string) { mu.Lock(); msgs = append(msgs, msg); mu.Unlock() })
	w.Start()
	defer w.Stop()
	for piece := range 6 { // 600 ms in all, two limits
		time.Sleep(100 * time.Millisecond)
		w.Loaded(fmt.Sprintf("block %d", piece))
	}
	mu.Lock()
	if len(msgs) != 0 {
		t.Fatalf("a load with pieces shorter than the limit was stopped: %q", msgs)
	}
	mu.Unlock()
	time.Sleep(600 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(msgs) != 1 || !strings.Contains(msgs[0], "rank 1: no progress for") || !strings.Contains(msgs[0], "in loading (after block 5)") {
		t.Fatalf("stalled after block 5: messages %q, want one naming the rank and \"loading (after block 5)\"", msgs)
	}
}
