package jobs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"scalegnn/checkpoint"
	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/record"
)

// slowStep is a method of one step per epoch whose step `block` waits
// until release is closed, as a step of several seconds does while a
// signal arrives; its checkpoints are empty directories.
type slowStep struct {
	Method
	block   int
	entered chan struct{}
	release chan struct{}
}

func (slowStep) StepsPerEpoch() int                     { return 1 }
func (slowStep) Start(step, epochs int) error           { return nil }
func (slowStep) BeginEpoch()                            {}
func (slowStep) EndEpoch()                              {}
func (slowStep) Counters() [2]int64                     { return [2]int64{} }
func (slowStep) Split(time.Duration) Split              { return Split{} }
func (slowStep) Close()                                 {}
func (slowStep) Evaluate() (gcn.Accuracy, int64, error) { return gcn.Accuracy{}, 0, nil }
func (slowStep) Fingerprint() (gcn.Fingerprint, error)  { return gcn.Fingerprint{}, nil }
func (slowStep) ModelConfig() gcn.Config                { return gcn.Config{} }
func (slowStep) GridName() string                       { return "1x1x1" }
func (slowStep) OptimizerSteps() int                    { return 0 }

func (m slowStep) Step(step int) (float64, error) {
	if step == m.block {
		close(m.entered)
		<-m.release
	}
	return 1, nil
}

func (slowStep) SaveParams(root string, keep int, man checkpoint.Manifest, config []byte) (string, error) {
	dir := filepath.Join(root, fmt.Sprintf("ckpt-%08d", man.Step))
	return dir, os.MkdirAll(dir, 0o755)
}

// TestInterruptingWritesAtOnce (defect 7): the first signal's hook
// rewrites summary.json at once, while a slow step is still under way —
// "interrupted", the stop to come, and the newest checkpoint — so that a
// launcher's kill before the step boundary leaves a summary that tells the
// truth. At the boundary the run writes its stop checkpoint and the final
// status as before.
func TestInterruptingWritesAtOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	m := slowStep{block: 2, entered: make(chan struct{}), release: make(chan struct{})}
	j := outputJob(dir, func(c *jobfile.Config) { c.Train.Epochs, c.Checkpoint.Every = 5, 1 })
	j.method = m
	var signalled atomic.Value
	signalled.Store("")
	j.Interrupt = func() string { return signalled.Load().(string) }
	if err := j.OpenOutput(OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := j.Train()
		done <- err
	}()
	<-m.entered // epoch 3's step, after the checkpoint of epoch 2
	signalled.Store("SIGTERM")
	if err := j.Interrupting("SIGTERM"); err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, dir)
	ckpt2 := filepath.Join(dir, "checkpoints", "ckpt-00000002")
	if s["status"] != "interrupted" || s["checkpoint"] != ckpt2 || s["epochs_run"] != 2.0 ||
		!strings.Contains(s["message"].(string), "SIGTERM received after epoch 2: stopping at the next step boundary") ||
		!strings.Contains(s["message"].(string), "resume from "+ckpt2) {
		t.Fatalf("summary during the slow step: %v", s)
	}
	close(m.release)
	err := <-done
	var ie *InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("Train: %v, want an InterruptedError", err)
	}
	s = readSummary(t, dir)
	if want := filepath.Join(dir, "checkpoints", "ckpt-00000003"); s["status"] != "interrupted" || s["checkpoint"] != want {
		t.Fatalf("final summary: status %v checkpoint %v, want interrupted %s", s["status"], s["checkpoint"], want)
	}
	// Once the run has ended, a late hook changes nothing.
	before := snapshot(t, dir)
	j.Interrupting("SIGTERM")
	j.Stalled("late")
	if after := snapshot(t, dir); after[filepath.Join(dir, record.SummaryFile)] != before[filepath.Join(dir, record.SummaryFile)] {
		t.Fatal("a hook after the end rewrote summary.json")
	}
}

// TestInterruptingWithoutCheckpoint: without [checkpoint] the summary says
// the run cannot be resumed; before any checkpoint it says there is none.
func TestInterruptingWithoutCheckpoint(t *testing.T) {
	for _, c := range []struct {
		every int
		want  string
	}{
		{0, "the job sets no [checkpoint], so it cannot be resumed"},
		{10, "none before it to resume from"},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		j := outputJob(dir, func(cfg *jobfile.Config) { cfg.Checkpoint.Every = c.every })
		if err := j.OpenOutput(OutputOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := j.Interrupting("SIGUSR1"); err != nil {
			t.Fatal(err)
		}
		s := readSummary(t, dir)
		if s["status"] != "interrupted" || s["checkpoint"] != nil || !strings.Contains(s["message"].(string), c.want) {
			t.Errorf("every %d: %v", c.every, s)
		}
	}
}

// TestStalledStatus (defect 8): the watchdog's line goes into summary.json
// as "stalled", on rank 0 and on a rank that sees rank 0's summary.json,
// and the run's own end writes nothing after it.
func TestStalledStatus(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	j := outputJob(dir, nil)
	if err := j.OpenOutput(OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	run, _ := j.beginRun()
	run.epochDone(record.EpochMetrics{Epoch: 1, Loss: 2})
	msg := "rank 3 made no progress for 10m0s in epoch 2, step 1 (AllReduce on world): ending the job"
	if err := j.Stalled(msg); err != nil {
		t.Fatal(err)
	}
	run.end(errors.New("collective aborted"))
	s := readSummary(t, dir)
	if s["status"] != "stalled" || s["message"] != msg || s["epochs_run"] != 1.0 {
		t.Fatalf("summary %v", s)
	}

	// Another rank (no metrics file of its own) writes when it sees the
	// summary, and not when there is none.
	other := outputJob(dir, nil)
	other.live.Store(&runState{j: other, res: &record.Result{Status: record.StatusRunning, EpochsRun: 4}})
	if err := other.Stalled("from rank 1"); err != nil {
		t.Fatal(err)
	}
	if s := readSummary(t, dir); s["message"] != "from rank 1" || s["epochs_run"] != 4.0 {
		t.Fatalf("summary from another rank: %v", s)
	}
	nowhere := outputJob(filepath.Join(t.TempDir(), "none"), nil)
	nowhere.live.Store(&runState{j: nowhere, res: &record.Result{}})
	nowhere.Stalled("x")
	if _, err := os.Stat(nowhere.Cfg.Output.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a rank without the run's directory wrote one: %v", err)
	}
}

// TestOutputDirLock (defect 10): a live run holds output.dir; a second job
// — a rerun, an overwrite or a resume — is refused with one line naming
// it, and nothing changes; once the run ends the directory is free.
func TestOutputDirLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	first := outputJob(dir, func(c *jobfile.Config) { c.Checkpoint.Every = 1 })
	if err := first.OpenOutput(OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	for _, c := range []struct {
		name string
		edit func(*jobfile.Config)
		opts OutputOptions
	}{
		{"resume", nil, OutputOptions{Resume: true}},
		{"overwrite", func(c *jobfile.Config) { c.Output.Overwrite = true }, OutputOptions{}},
	} {
		second := outputJob(dir, c.edit)
		want := fmt.Sprintf("is in use by another job (pid %d on ", os.Getpid())
		if err := CheckOutputDir(second.Cfg, c.opts); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: CheckOutputDir: %v, want %q", c.name, err, want)
		}
		if err := second.OpenOutput(c.opts); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: OpenOutput: %v, want %q", c.name, err, want)
		}
	}
	if after := snapshot(t, dir); len(after) != len(before) {
		t.Fatalf("refused jobs changed the directory")
	}
	run, _ := first.beginRun()
	run.epochDone(record.EpochMetrics{Epoch: 1, Loss: 2})
	run.end(&InterruptedError{Signal: "SIGTERM", Epoch: 2, Step: 1})
	if _, err := os.Stat(filepath.Join(dir, record.LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock file stays after the run: %v", err)
	}
	if err := CheckOutputDir(outputJob(dir, nil).Cfg, OutputOptions{Resume: true}); err != nil {
		t.Fatalf("resume after the run ended: %v", err)
	}
}

// TestOutputDirStaleLock (defects 8, 10): a lock file left by a killed
// job, with summary.json still "running", is taken over by the resume,
// which says so in one line each: the run ended abnormally, and whose lock
// it takes over.
func TestOutputDirStaleLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	first := outputJob(dir, nil)
	if err := first.OpenOutput(OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	run, _ := first.beginRun()
	run.epochDone(record.EpochMetrics{Epoch: 1, Loss: 2})
	killed(t, run)
	core, logs := observer.New(zap.WarnLevel)
	second := outputJob(dir, nil)
	second.log = zap.New(core)
	second.resume = &checkpoint.Manifest{Epoch: 1, Step: 1}
	if err := second.OpenOutput(OutputOptions{Resume: true}); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range logs.All() {
		lines = append(lines, e.Message)
	}
	all := strings.Join(lines, "\n")
	if len(lines) != 2 || !strings.Contains(all, "ended abnormally: summary.json still says \"running\"") || !strings.Contains(all, "taking over output.dir's lock from the job that held it (pid 4242 on node7, ") {
		t.Fatalf("resume's lines:\n%s", all)
	}
	r, _ := second.beginRun()
	r.end(nil)
}

// TestResumeSaysDroppedMetrics (defect 9): resuming from a checkpoint
// older than the metrics file's last epoch says in one line how many lines
// it drops, of which epochs.
func TestResumeSaysDroppedMetrics(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	first := outputJob(dir, nil)
	if err := first.OpenOutput(OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	run, _ := first.beginRun()
	for e := 1; e <= 6; e++ {
		run.epochDone(record.EpochMetrics{Epoch: e, Loss: 2})
	}
	run.end(errors.New("stopped"))
	core, logs := observer.New(zap.WarnLevel)
	second := outputJob(dir, nil)
	second.log = zap.New(core)
	second.resume = &checkpoint.Manifest{Epoch: 4, Step: 4}
	if err := second.OpenOutput(OutputOptions{Resume: true}); err != nil {
		t.Fatal(err)
	}
	want := "resuming after epoch 4 drops the 2 metrics lines of epochs 5-6 from " + filepath.Join(dir, "metrics.jsonl") + "; they are trained again"
	if e := logs.All(); len(e) != 1 || e[0].Message != want {
		t.Fatalf("resume's lines: %v, want %q", e, want)
	}
	r, _ := second.beginRun()
	r.end(nil)
}

// TestResumeRefusesNoEpochsLeft (defect 9): a checkpoint at or after
// train.epochs is refused with one line saying to raise train.epochs,
// instead of a "completed" run that cut metrics.jsonl back to it.
func TestResumeRefusesNoEpochsLeft(t *testing.T) {
	for _, c := range []struct {
		epoch int
		ok    bool
	}{{99, true}, {100, false}, {590, false}} {
		dir := filepath.Join(t.TempDir(), "run")
		j := outputJob(dir, func(cfg *jobfile.Config) { cfg.Train.Epochs = 100 })
		j.resume, j.resumeDir = &checkpoint.Manifest{Epoch: c.epoch}, "runs/x/checkpoints/ckpt"
		err := j.OpenOutput(OutputOptions{Resume: true})
		if c.ok != (err == nil) {
			t.Errorf("epoch %d: %v", c.epoch, err)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("train.epochs = 100 leaves nothing to train: raise train.epochs above %d", c.epoch)) {
			t.Errorf("epoch %d: %v", c.epoch, err)
		}
		if err != nil {
			if _, serr := os.Stat(dir); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("epoch %d: the refused resume wrote %s", c.epoch, dir)
			}
			continue
		}
		r, _ := j.beginRun()
		r.end(nil)
	}
}

// TestFailedStartDoesNotBlockRerun (defect 14): a run that ended before
// its first epoch — failed, or killed with summary.json still "running" —
// does not block its rerun, which replaces it with a line saying so; a run
// with an epoch, or a live one, still does.
func TestFailedStartDoesNotBlockRerun(t *testing.T) {
	for _, c := range []struct {
		name    string
		end     func(*runState)
		replace bool
	}{
		{"failed", func(r *runState) { r.end(errors.New("model: hidden must be positive")) }, true},
		{"killed", func(r *runState) { killed(t, r) }, true},
		{"failed after an epoch", func(r *runState) {
			r.epochDone(record.EpochMetrics{Epoch: 1, Loss: 2})
			r.end(errors.New("disk full"))
		}, false},
		{"live", func(*runState) {}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			first := outputJob(dir, nil)
			if err := first.OpenOutput(OutputOptions{}); err != nil {
				t.Fatal(err)
			}
			run, _ := first.beginRun()
			c.end(run)
			core, logs := observer.New(zap.WarnLevel)
			rerun := outputJob(dir, nil)
			rerun.log = zap.New(core)
			err := rerun.OpenOutput(OutputOptions{})
			if c.replace != (err == nil) {
				t.Fatalf("rerun: %v", err)
			}
			if !c.replace {
				return
			}
			if e := logs.All(); len(e) == 0 || !strings.Contains(e[0].Message, "holds a run that never trained") {
				t.Fatalf("rerun's lines: %v", e)
			}
			if s := readSummary(t, dir); s["status"] != "running" {
				t.Fatalf("rerun's summary: %v", s)
			}
			r, _ := rerun.beginRun()
			r.end(nil)
		})
	}
}

// killed leaves run's directory as a job killed with SIGKILL does: the
// kernel released the lock's flock, and its file names the dead job.
func killed(t *testing.T, run *runState) {
	t.Helper()
	run.metrics.Close()
	run.lock.Release()
	dead := "pid 4242 on node7, started 2026-01-02T03:04:05Z\n"
	if err := os.WriteFile(filepath.Join(run.j.Cfg.Output.Dir, record.LockFile), []byte(dead), 0o644); err != nil {
		t.Fatal(err)
	}
}
