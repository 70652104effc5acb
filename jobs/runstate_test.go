package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/grid"
	"scalegnn/jobfile"
	"scalegnn/record"
)

// outputJob is a one-rank Job with only what OpenOutput and the run's
// bookkeeping use, writing to dir.
func outputJob(dir string, edit func(*jobfile.Config)) *Job {
	cfg := jobfile.DefaultConfig()
	cfg.Output.Dir = dir
	if edit != nil {
		edit(&cfg)
	}
	return &Job{Cfg: &cfg, Grid: &grid.Grid{Shape: grid.Shape{D: 1, X: 1, Y: 1, Z: 1}},
		log: zap.NewNop(), world: collectives.NewLocalWorld(1)[0], method: oneStep{}}
}

// oneStep is a method of one step per epoch, for jobs that never train.
type oneStep struct{ Method }

func (oneStep) StepsPerEpoch() int { return 1 }

// readSummary reads dir/summary.json, failing the test when it is not
// valid JSON.
func readSummary(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, record.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("summary.json does not parse: %v\n%s", err, b)
	}
	return s
}

// snapshot returns every file under dir with its contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			files[p] = string(b)
		}
		return nil
	})
	return files
}

// TestRunStatus walks a run through its statuses: running once the output
// is open, then completed, diverged or failed, with summary.json valid
// JSON at every point and read back by ReadRun.
func TestRunStatus(t *testing.T) {
	acc := 0.5
	em := record.EpochMetrics{Epoch: 1, Loss: 1.25, Steps: 1, EpochSec: 0.01, TrainAcc: &acc, ValAcc: &acc, TestAcc: &acc}
	for _, c := range []struct {
		name    string
		err     error
		status  record.Status
		message string
	}{
		{"completed", nil, record.StatusCompleted, ""},
		{"diverged", &DivergedError{Epoch: 2, Step: 1, Loss: math.NaN(), LR: 1e30}, record.StatusDiverged,
			"training diverged at epoch 2, step 1: the loss is NaN; lower optimizer.lr (now 1e+30) and run again"},
		{"failed", errors.New("disk on fire"), record.StatusFailed, "disk on fire"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			j := outputJob(dir, nil)
			if err := j.OpenOutput(OutputOptions{}); err != nil {
				t.Fatal(err)
			}
			if s := readSummary(t, dir); s["status"] != "running" {
				t.Fatalf("status after OpenOutput: %v", s["status"])
			}
			for _, f := range []string{"config.toml", "metrics.jsonl"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Fatalf("OpenOutput did not write %s: %v", f, err)
				}
			}
			run, err := j.beginRun()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := run.epochDone(em); err != nil {
				t.Fatal(err)
			}
			run.res.Final.Train, run.res.Final.Val, run.res.Final.Test = 0.5, 0.5, 0.5 // as Train sets it
			if err := run.end(c.err); err != c.err {
				t.Fatalf("end returned %v, want %v", err, c.err)
			}
			s := readSummary(t, dir)
			if s["status"] != string(c.status) || (s["message"] != nil) != (c.message != "") ||
				(c.message != "" && s["message"] != c.message) {
				t.Fatalf("summary status %v message %q, want %s %q", s["status"], s["message"], c.status, c.message)
			}
			fa, ok := s["final_accuracy"].(map[string]any)
			if !ok || fa["train"] != 0.5 || fa["val"] != 0.5 || fa["test"] != 0.5 {
				t.Fatalf("final_accuracy with snake_case keys: %v", s["final_accuracy"])
			}
			r, err := record.ReadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			if r.Summary.Status != c.status || r.Summary.EpochsRun != 1 || len(r.Metrics) != 1 {
				t.Fatalf("ReadRun: %+v", r.Summary)
			}
			if c.status == record.StatusDiverged && !math.IsNaN(r.Summary.FinalLoss) {
				t.Fatalf("a diverged run's final loss reads back as %v, want NaN", r.Summary.FinalLoss)
			}
		})
	}
}

// TestOutputDirRefused: a directory holding another run is refused and left
// byte for byte as it was; output.overwrite (or a resume) takes it, and
// overwriting removes the old run's files.
func TestOutputDirRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	first := outputJob(dir, nil)
	if err := first.OpenOutput(OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	run, _ := first.beginRun()
	run.epochDone(record.EpochMetrics{Epoch: 1, Loss: 2})
	run.end(nil)
	before := snapshot(t, dir)

	again := outputJob(dir, nil)
	err := again.OpenOutput(OutputOptions{})
	if err == nil || !strings.Contains(err.Error(), "holds another run") || !strings.Contains(err.Error(), "output.overwrite = true") {
		t.Fatalf("rerun into a used directory: %v", err)
	}
	if after := snapshot(t, dir); len(after) != len(before) {
		t.Fatalf("refused rerun changed the directory: %d files, had %d", len(after), len(before))
	} else {
		for p, b := range before {
			if after[p] != b {
				t.Fatalf("refused rerun changed %s", p)
			}
		}
	}
	if err := CheckOutputDir(again.Cfg, OutputOptions{Resume: true}); err != nil {
		t.Fatalf("a resume is refused: %v", err)
	}

	over := outputJob(dir, func(c *jobfile.Config) { c.Output.Overwrite = true })
	if err := over.OpenOutput(OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	if ms, err := record.ReadMetrics(filepath.Join(dir, "metrics.jsonl")); err != nil || len(ms) != 0 {
		t.Fatalf("overwriting kept the old metrics: %d epochs, %v", len(ms), err)
	}
	if s := readSummary(t, dir); s["status"] != "running" {
		t.Fatalf("overwritten summary status %v", s["status"])
	}
}

func TestCheckOutputDir(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "afile")
	os.WriteFile(file, []byte("x"), 0o644)
	other := filepath.Join(root, "other")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o644)
	for _, c := range []struct {
		name, dir, runFile, want string
	}{
		{"missing", filepath.Join(root, "new"), "", ""},
		{"unrelated files", other, "", ""},
		{"config", filepath.Join(root, "c"), "config.toml", "config.toml exists"},
		{"summary", filepath.Join(root, "s"), "summary.json", "summary.json exists"},
		{"metrics", filepath.Join(root, "m"), "metrics.jsonl", "metrics.jsonl exists"},
		{"a file", file, "", "is a file: expected a directory"},
	} {
		if c.runFile != "" {
			os.MkdirAll(c.dir, 0o755)
			os.WriteFile(filepath.Join(c.dir, c.runFile), nil, 0o644)
		}
		cfg := jobfile.DefaultConfig()
		cfg.Output.Dir = c.dir
		err := CheckOutputDir(&cfg, OutputOptions{})
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestWriteSummaryAtomic: the summary replaces the old one whole and leaves
// no temporary file; a non-finite loss is written as null, not dropped.
func TestWriteSummaryAtomic(t *testing.T) {
	dir := t.TempDir()
	if err := record.WriteSummary(dir, &record.Result{Status: record.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	if err := record.WriteSummary(dir, &record.Result{Status: record.StatusDiverged, FinalLoss: math.Inf(1)}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d files after two writes, want summary.json alone", len(entries))
	}
	b, _ := os.ReadFile(filepath.Join(dir, record.SummaryFile))
	if !bytes.Contains(b, []byte(`"final_loss": null`)) || !bytes.Contains(b, []byte(`"status": "diverged"`)) {
		t.Fatalf("summary.json:\n%s", b)
	}
}

func TestStopRule(t *testing.T) {
	for _, c := range []struct {
		name    string
		rule    stopRule
		vals    []float64
		stopAt  int // index of the evaluation that stops; -1: none
		stopWhy string
	}{
		{"off", stopRule{}, []float64{0.1, 0.1, 0.1, 0.1}, -1, ""},
		{"target", stopRule{target: 0.5}, []float64{0.1, 0.49, 0.5, 0.9}, 2, record.StopTargetAcc},
		{"patience 2", stopRule{patience: 2}, []float64{0.1, 0.3, 0.3, 0.2, 0.9}, 3, record.StopPatience},
		{"improvement resets patience", stopRule{patience: 2}, []float64{0.1, 0.1, 0.2, 0.2, 0.3}, -1, ""},
		{"target before patience", stopRule{target: 0.3, patience: 1}, []float64{0.3}, 0, record.StopTargetAcc},
	} {
		r, at, why := c.rule, -1, ""
		for i, v := range c.vals {
			if why = r.observe(v); why != "" {
				at = i
				break
			}
		}
		if at != c.stopAt || why != c.stopWhy {
			t.Errorf("%s: stopped at evaluation %d (%q), want %d (%q)", c.name, at, why, c.stopAt, c.stopWhy)
		}
	}
}

// TestEarlyStopRecordsTarget: epochDone stops at the target and records
// the epoch and time to it.
func TestEarlyStopRecordsTarget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	j := outputJob(dir, func(c *jobfile.Config) { c.Train.TargetAcc = 0.7 })
	if err := j.OpenOutput(OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	run, _ := j.beginRun()
	for e, val := range []float64{0.5, 0.72} {
		em := record.EpochMetrics{Epoch: e + 1, Loss: 1}
		em.SetAccuracies(1, val, val)
		stop, err := run.epochDone(em)
		if err != nil || stop != (e == 1) {
			t.Fatalf("epoch %d: stop %v, %v", e+1, stop, err)
		}
	}
	run.end(nil)
	r, err := record.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Summary; s.StopReason != record.StopTargetAcc || s.TargetEpoch != 2 || s.TimeToTargetS == nil || *s.TimeToTargetS < 0 || s.EpochsRun != 2 {
		t.Fatalf("summary %+v", s)
	}
}

func TestProgressLine(t *testing.T) {
	m := record.EpochMetrics{Epoch: 40, Loss: 0.81234}
	m.SetAccuracies(0.9143, 0.7738, 0.792)
	for _, c := range []struct {
		m      record.EpochMetrics
		epochs int
		sec    float64
		want   string
	}{
		{m, 200, 0.0231, "epoch  40/200  loss 0.8123  acc train 0.914 val 0.774 test 0.792  23.1 ms/epoch  ETA 3.7s"},
		{m, 40, 0.0231, "epoch 40/40  loss 0.8123  acc train 0.914 val 0.774 test 0.792  23.1 ms/epoch  ETA 0.0s"},
		{m, 1000, 2.5, "epoch   40/1000  loss 0.8123  acc train 0.914 val 0.774 test 0.792  2.50 s/epoch  ETA 40m0s"},
		{record.EpochMetrics{Epoch: 3, Loss: math.NaN()}, 9, 0.001, "epoch 3/9  loss NaN  1.0 ms/epoch  ETA 0.0s"},
	} {
		if got := ProgressLine(c.m, c.epochs, c.sec); got != c.want {
			t.Errorf("ProgressLine:\n got %q\nwant %q", got, c.want)
		}
	}
}
