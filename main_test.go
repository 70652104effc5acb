package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"scalegnn/internal/launch"
	"scalegnn/record"
)

// TestMain lets the tests run the real program: with SCALEGNN_AS_MAIN set,
// the test binary is scalegnn (an MPI singleton, no mpirun needed).
func TestMain(m *testing.M) {
	if os.Getenv("SCALEGNN_AS_MAIN") == "1" {
		os.Exit(int(run(os.Args[1:], os.Stderr)))
	}
	os.Exit(m.Run())
}

// runMain runs scalegnn with args in a child process and returns its exit
// code and standard error. A child that does not finish in a minute is a
// hang, which is a failure in itself.
func runMain(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SCALEGNN_AS_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("scalegnn %v hung (killed after a minute); stderr:\n%s", args, stderr.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running scalegnn %v: %v", args, err)
	}
	return code, stderr.String()
}

// TestBadInput feeds the program each kind of bad input (the fixtures in
// testdata/badinput, also run under mpirun -np 8 by scripts/badinput.sh)
// and requires a non-zero exit and one line that names the problem: no
// stack trace, no hang.
func TestBadInput(t *testing.T) {
	cases := []struct{ job, want string }{
		{"malformed.toml", "malformed.toml: line 2, column 10"},
		{"unknown_key.toml", "unknown key model.hiden: did you mean model.hidden?"},
		{"grid_mismatch.toml", "grid 3x1x1 (d=1) has 3 ranks but the job was started with 1"},
		{"bad_value.toml", "model.dropout = 1.5: expected a number in [0, 1)"},
		{"missing_file.toml", "missing_file/edges.txt: file does not exist"},
		{"bad_line.toml", `bad_line/labels.txt:3: expected "<node>\t<class>"`},
		{"truncated.toml", `truncated/edges.txt:3: expected "<u>\t<v>"`},
		{"no_such_job.toml", "no_such_job.toml"},
		{"batch_zero.toml", `train.mode = "minibatch" needs a batch size of at least 1 vertex`},
		{"batch_too_big.toml", "train.batch_size: batch size 5 is outside [1, 4], the number of vertices"},
		{"dp_not_dividing.toml", "grid.d = 3 data-parallel replicas do not divide the 1 ranks"},
		{"bf16_unsupported.toml", `train.comm_dtype = "bf16" compresses the all-reduces inside a 3D grid, and a 1x1x1 grid has none`},
	}
	for _, c := range cases {
		t.Run(c.job, func(t *testing.T) {
			code, stderr := runMain(t, "-config", filepath.Join("testdata", "badinput", c.job))
			if code == 0 {
				t.Fatalf("exit code 0 for bad input; stderr:\n%s", stderr)
			}
			lines := errorLines(stderr)
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "scalegnn: ") || !strings.Contains(lines[0], c.want) {
				t.Fatalf("want one line starting \"scalegnn: \" containing %q, got:\n%s", c.want, stderr)
			}
		})
	}
}

// errorLines drops rank 0's log lines (time, level, message, two spaces
// apart) from stderr.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if f := strings.SplitN(l, "  ", 3); len(f) == 3 && (f[1] == "INFO" || f[1] == "WARN" || f[1] == "DEBUG") {
			continue
		}
		out = append(out, l)
	}
	return out
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"-config"}, {"frobnicate"}, {"-config", "a.toml", "extra"}} {
		code, stderr := runMain(t, args...)
		if code != 2 || !strings.Contains(stderr, "usage:") {
			t.Errorf("scalegnn %v: exit %d, want 2 with usage; stderr:\n%s", args, code, stderr)
		}
	}
}

// TestTrainTiny runs a whole (two-epoch) job on the tiny fixture and checks
// the files a user gets.
func TestTrainTiny(t *testing.T) {
	dir := t.TempDir()
	job, err := os.ReadFile(filepath.Join("testdata", "badinput", "ok_tiny.toml"))
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(filepath.Join("testdata", "badinput", "tiny"))
	text := strings.Replace(string(job), `path = "tiny"`, `path = "`+abs+`"`, 1)
	text = strings.Replace(text, `dir = "/tmp/scalegnn-badinput"`, `dir = "`+dir+`"`, 1)
	path := filepath.Join(dir, "job.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := runMain(t, "-config", path)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	for _, f := range []string{"metrics.jsonl", "summary.json", "config.toml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("output file missing: %v", err)
		}
	}
	if !strings.Contains(stderr, "epoch 2/2  loss ") || !strings.Contains(stderr, "done  2 epochs") {
		t.Errorf("log lacks the epochs or the final line:\n%s", stderr)
	}
	// compare reads a run from its directory or its metrics file.
	var out bytes.Buffer
	if code := runCompare([]string{"-tol", "0", dir, filepath.Join(dir, "metrics.jsonl")}, &out, io.Discard); code != 0 ||
		!strings.Contains(out.String(), "same training: 2 epochs") {
		t.Errorf("compare of a run with itself: exit %d, %q", code, out.String())
	}
}

// TestGridFlag: -grid takes grid.ParseShape's forms, and a bad one is a
// usage error naming the flag and the forms expected.
func TestGridFlag(t *testing.T) {
	code, stderr := runMain(t, "-config", "job.toml", "-grid", "2x2")
	if code != 2 || !strings.Contains(stderr, `scalegnn: -grid: grid "2x2": expected XxYxZ`) {
		t.Errorf("-grid 2x2: exit %d, stderr:\n%s", code, stderr)
	}
	code, stderr = runMain(t, "-config", filepath.Join("testdata", "badinput", "ok_tiny.toml"), "-grid", "1x1x1 (d=3)")
	if code != 1 || !strings.Contains(stderr, "grid.d = 3: expected 1 in full-graph training") {
		t.Errorf("-grid \"1x1x1 (d=3)\": exit %d, stderr:\n%s", code, stderr)
	}
}

// TestSelftestSingleton runs scalegnn selftest on one rank (an MPI
// singleton): both conformance suites on the 1x1x1 grid, through the same
// MPI start, agreement and finalize as training.
func TestSelftestSingleton(t *testing.T) {
	code, stderr := runMain(t, "selftest")
	if code != 0 || !strings.Contains(stderr, "collectives conformance: ok on 1 ranks") ||
		!strings.Contains(stderr, "model vs serial reference: ok on 1 grids of 1 ranks ([1x1x1 (d=1)])") {
		t.Errorf("selftest: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestCompareMetrics checks that compare accepts identical training and
// rejects a loss or accuracy that differs, or a different epoch count.
func TestCompareMetrics(t *testing.T) {
	acc := func(v float64) *float64 { return &v }
	base := func() []record.EpochMetrics {
		return []record.EpochMetrics{
			{Epoch: 1, Loss: 1.9},
			{Epoch: 2, Loss: 1.7, TrainAcc: acc(0.5), ValAcc: acc(0.4), TestAcc: acc(0.45)},
		}
	}
	if err := compareMetrics(io.Discard, base(), base(), 1e-5, 0); err != nil {
		t.Fatalf("identical runs: %v", err)
	}
	loss := base()
	loss[1].Loss *= 1 + 1e-4
	if err := compareMetrics(io.Discard, base(), loss, 1e-5, 0); err == nil || !strings.Contains(err.Error(), "epoch 2: loss") {
		t.Errorf("loss differing by 1e-4: got %v", err)
	}
	accDiff := base()
	accDiff[1].TestAcc = acc(0.46)
	if err := compareMetrics(io.Discard, base(), accDiff, 1e-5, 0); err == nil || !strings.Contains(err.Error(), "test accuracy") {
		t.Errorf("test accuracy differing: got %v", err)
	}
	if err := compareMetrics(io.Discard, base(), base()[:1], 1e-5, 0); err == nil {
		t.Error("different epoch counts accepted")
	}
}

// tinyJob writes the tiny fixture's job with output.dir = dir and extra
// TOML appended (keys of tables the fixture does not have).
func tinyJob(t *testing.T, dir, extra string) string {
	t.Helper()
	job, err := os.ReadFile(filepath.Join("testdata", "badinput", "ok_tiny.toml"))
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(filepath.Join("testdata", "badinput", "tiny"))
	text := strings.Replace(string(job), `path = "tiny"`, `path = "`+abs+`"`, 1)
	text = strings.Replace(text, `dir = "/tmp/scalegnn-badinput"`, `dir = "`+filepath.Join(dir, "out")+`"`, 1)
	path := filepath.Join(dir, "job.toml")
	if err := os.WriteFile(path, []byte(text+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readStatus reads a run's summary.json, failing when it does not parse.
func readStatus(t *testing.T, dir string) *record.Result {
	t.Helper()
	r, err := record.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary == nil {
		t.Fatalf("%s: no summary.json", dir)
	}
	return r.Summary
}

// TestDiverged: lr = 1e30 stops the run at the first non-finite loss with
// one line naming the epoch, the step and the loss and a hint, exit 4, and
// a summary.json that parses with status "diverged".
func TestDiverged(t *testing.T) {
	dir := t.TempDir()
	path := tinyJob(t, dir, "[optimizer]\nlr = 1e30\n")
	code, stderr := runMain(t, "-config", path)
	if code != int(launch.ExitDiverged) {
		t.Fatalf("exit %d, want %d:\n%s", code, launch.ExitDiverged, stderr)
	}
	if n := strings.Count(stderr, "scalegnn: "); n != 1 || !strings.Contains(stderr, "scalegnn: training diverged at epoch ") ||
		!strings.Contains(stderr, "lower optimizer.lr (now 1e+30)") {
		t.Fatalf("want one line naming the divergence and the hint:\n%s", stderr)
	}
	s := readStatus(t, filepath.Join(dir, "out"))
	if s.Status != record.StatusDiverged || !strings.Contains(s.Message, "the loss is") || s.EpochsRun >= 2 {
		t.Fatalf("summary: %+v", s)
	}
}

// TestOutputDirHygiene: a run that fails in setup writes nothing; a rerun
// into a used directory is refused and leaves it as it was; output.overwrite
// takes it.
func TestOutputDirHygiene(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	bad := tinyJob(t, dir, "")
	text, _ := os.ReadFile(bad)
	os.WriteFile(bad, []byte(strings.Replace(string(text), "badinput/tiny", "badinput/missing_file", 1)), 0o644)
	if code, stderr := runMain(t, "-config", bad); code == 0 || !strings.Contains(stderr, "edges.txt") {
		t.Fatalf("missing data: exit %d:\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a run that failed in setup created output.dir")
	}

	path := tinyJob(t, dir, "")
	if code, stderr := runMain(t, "-config", path); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	before := map[string][]byte{}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		before[e.Name()], _ = os.ReadFile(filepath.Join(out, e.Name()))
	}
	code, stderr := runMain(t, "-config", path)
	if code != 1 || !strings.Contains(stderr, "holds another run") {
		t.Fatalf("rerun: exit %d:\n%s", code, stderr)
	}
	entries, _ = os.ReadDir(out)
	if len(entries) != len(before) {
		t.Fatalf("refused rerun left %d files, had %d", len(entries), len(before))
	}
	for _, e := range entries {
		if b, _ := os.ReadFile(filepath.Join(out, e.Name())); !bytes.Equal(b, before[e.Name()]) {
			t.Fatalf("refused rerun changed %s", e.Name())
		}
	}
	over := tinyJob(t, dir, "")
	text, _ = os.ReadFile(over)
	os.WriteFile(over, []byte(strings.Replace(string(text), "[output]\n", "[output]\noverwrite = true\n", 1)), 0o644)
	if code, stderr := runMain(t, "-config", over); code != 0 {
		t.Fatalf("overwrite: exit %d:\n%s", code, stderr)
	}
	if s := readStatus(t, out); s.Status != record.StatusCompleted {
		t.Fatalf("overwritten run: %+v", s)
	}
}

// TestFailedStartRerun (issue 25, defect 14: "a failed start leaves
// config.toml, which blocks the rerun"), with real processes: a Cora job
// (hidden 1024: over a second an epoch) is killed with SIGKILL as soon as
// its output.dir is written (config.toml, summary.json "running", an
// empty metrics file, the lock), before its first epoch; the job rerun
// into the same directory replaces that run, says so in one line, and
// completes. A job that fails in setup, before output.dir exists, is
// TestOutputDirHygiene's first case; a start that fails with an error
// after output.dir was written is jobs' TestFailedStartDoesNotBlockRerun.
func TestFailedStartRerun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	cora, err := os.ReadFile(filepath.Join("examples", "cora.toml"))
	if err != nil {
		t.Fatal(err)
	}
	job := func(name, hidden, epochs string) string {
		text := strings.Replace(string(cora), "hidden = 16", "hidden = "+hidden, 1)
		text = strings.Replace(text, "epochs = 200", "epochs = "+epochs, 1)
		text = strings.Replace(text, `dir = "runs/cora"`, `dir = "`+out+`"`, 1)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cmd := exec.Command(os.Args[0], "-config", job("slow.toml", "1024", "3"))
	cmd.Env = append(os.Environ(), "SCALEGNN_AS_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	metrics := filepath.Join(out, "metrics.jsonl")
	deadline := time.After(time.Minute)
wait:
	for {
		select {
		case err := <-exited:
			t.Fatalf("the slow job ended (%v) before its output.dir was written:\n%s", err, stderr.String())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("no %s after a minute:\n%s", metrics, stderr.String())
		case <-time.After(5 * time.Millisecond):
			if _, err := os.Stat(metrics); err == nil {
				break wait
			}
		}
	}
	cmd.Process.Kill()
	<-exited
	if b, _ := os.ReadFile(metrics); len(b) != 0 {
		t.Fatalf("the job trained an epoch before it was killed (make its epochs slower):\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(out, "config.toml")); err != nil {
		t.Fatalf("the killed start left no config.toml (the case this test is about): %v", err)
	}
	code, rerr := runMain(t, "-config", job("rerun.toml", "16", "2"))
	if code != 0 {
		t.Fatalf("rerun after a killed start: exit %d:\n%s", code, rerr)
	}
	if !strings.Contains(rerr, "holds a run that never trained") {
		t.Fatalf("rerun: no line saying it replaces the killed start:\n%s", rerr)
	}
	if s := readStatus(t, out); s.Status != record.StatusCompleted || s.EpochsRun != 2 {
		t.Fatalf("rerun's summary: %+v", s)
	}
}

// TestTargetAcc: train.target_acc stops at the first evaluation reaching
// it and records the time to it.
func TestTargetAcc(t *testing.T) {
	dir := t.TempDir()
	path := tinyJob(t, dir, "")
	text, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(text), "epochs = 2", "epochs = 50\ntarget_acc = 0.01", 1)), 0o644)
	code, stderr := runMain(t, "-config", path)
	if code != 0 || !strings.Contains(stderr, "target reached at epoch 1") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	s := readStatus(t, filepath.Join(dir, "out"))
	if s.Status != record.StatusCompleted || s.StopReason != record.StopTargetAcc || s.EpochsRun != 1 || s.TargetEpoch != 1 || s.TimeToTargetS == nil {
		t.Fatalf("summary: %+v", s)
	}
}
