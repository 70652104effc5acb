package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"scalegnn/internal/launch"
	"scalegnn/internal/par"
)

// injectEnv and skipEnv, in the environment of the test binary run as
// scalegnn, arm a panic with injectEnv's value in the worker goroutine
// started after skipEnv others (par.InjectPanic).
const (
	injectEnv = "SCALEGNN_TEST_INJECT_PANIC"
	skipEnv   = "SCALEGNN_TEST_INJECT_SKIP"
)

func init() {
	if v := os.Getenv(injectEnv); v != "" && os.Getenv("SCALEGNN_AS_MAIN") == "1" {
		skip, _ := strconv.Atoi(os.Getenv(skipEnv))
		par.InjectPanic(v, skip)
	}
}

// TestGoroutinePanic: a panic inside a worker goroutine of a training run
// (a loader's, a kernel's) ends the job with one line naming it and the
// internal error's exit code, not Go's trace of every goroutine. A second
// run with SCALEGNN_TRACEBACK=1 shows the caller's stack, which proves
// where the fault was injected.
func TestGoroutinePanic(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "job.toml")
	text := `[dataset]
source = "cora"
[model]
layers = 2
hidden = 16
[train]
epochs = 1
[runtime]
threads = 2
[output]
overwrite = true
dir = "` + filepath.Join(dir, "out") + `"
`
	if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		skip  int
		where string // a package on the caller's stack
	}{
		// Cora's 2708 rows are one task of permute's balance count
		// while loading: the first goroutine.
		{"loader", 0, "scalegnn/permute.parallelRows"},
		// Then the device's kernels (SpMM, element-wise) run parts on
		// their pool's workers.
		{"kernel", 3, "scalegnn/device.(*CPU)."},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(injectEnv, "injected fault")
			t.Setenv(skipEnv, strconv.Itoa(c.skip))
			code, stderr := runMain(t, "-config", job)
			if code != int(launch.ExitInternal) {
				t.Fatalf("exit %d, want %d (internal error); stderr:\n%s", code, launch.ExitInternal, stderr)
			}
			lines := errorLines(stderr)
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "scalegnn: rank 0: internal error: injected fault") {
				t.Fatalf("want one line \"scalegnn: rank 0: internal error: injected fault ...\", got:\n%s", stderr)
			}
			t.Setenv("SCALEGNN_TRACEBACK", "1")
			if _, stderr := runMain(t, "-config", job); !strings.Contains(stderr, c.where) {
				t.Fatalf("the fault was not raised from %s:\n%s", c.where, stderr)
			}
		})
	}
}
