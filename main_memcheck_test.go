package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMemoryCheck: jobs that cannot fit are refused before loading, in
// under a second, with the prediction, the limit and a grid that fits, in
// one line (runtime.mem_check); with mem_check = false, under prlimit --as,
// the address-space check alone refuses them in one line, not a goroutine
// dump.
func TestMemoryCheck(t *testing.T) {
	for _, c := range []struct {
		job, prlimit string
		// want are regular expressions: the predicted sizes follow the
		// model's arena plan, so they are matched to their magnitude.
		want []string
	}{
		{"rmat27.toml", "", []string{`rank 0's predicted peak memory on grid 1x1x1 \(d=1\) is 1\d\dGiB, more than the`,
			`prepare the dataset \(scalegnn prepare\) to load it sharded: then the fastest grid that fits in`, `or set runtime\.mem_check = false`}},
		{"rmat22.toml", "", []string{`rank 0's predicted peak memory on grid 1x1x1 \(d=1\) is 21\.\dGiB, more than the `,
			`the fastest grid that fits in `}},
		{"rmat22-nocheck.toml", "--as=8589934592", []string{`is 21\.\dGiB, more than the`, `\(ulimit -v less the address space mapped`, `or raise ulimit -v`}},
		{"rmat27-nocheck.toml", "--as=8589934592", []string{`is 1\d\dGiB, more than the`, `\(ulimit -v less the address space mapped`}},
	} {
		t.Run(c.job, func(t *testing.T) {
			args := []string{"-config", filepath.Join("testdata", "memcheck", c.job)}
			if c.prlimit != "" {
				if _, err := exec.LookPath("prlimit"); err != nil {
					t.Skip("no prlimit")
				}
			}
			// The refusal must come before anything is loaded: within a few
			// seconds of what starting the program and MPI takes (a job
			// file refused at once is the baseline), where generating even
			// the smallest of these graphs (R-MAT scale 22) takes minutes.
			// Five seconds, not one, so that a loaded CI machine does not
			// fail it.
			t0 := time.Now()
			runMain(t, "-config", filepath.Join("testdata", "badinput", "bad_value.toml"))
			base := time.Since(t0)
			t0 = time.Now()
			code, stderr := runUnder(t, c.prlimit, args...)
			took := time.Since(t0) - base
			if code == 0 {
				t.Fatalf("exit 0; stderr:\n%s", stderr)
			}
			lines := errorLines(stderr)
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "scalegnn: ") {
				t.Fatalf("want one line starting \"scalegnn: \", got:\n%s", stderr)
			}
			for _, w := range c.want {
				if !regexp.MustCompile(w).MatchString(lines[0]) {
					t.Errorf("message %q does not contain %q", lines[0], w)
				}
			}
			if took > 5*time.Second {
				t.Errorf("refused %v after a bad job file would be (%v), want under 5 s", took, base)
			}
			t.Logf("%v after the baseline %v: %s", took.Round(time.Millisecond), base.Round(time.Millisecond), lines[0])
		})
	}
}

// runUnder is runMain, under prlimit with the flag limit when it is not
// empty.
func runUnder(t *testing.T, limit string, args ...string) (int, string) {
	t.Helper()
	if limit == "" {
		return runMain(t, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "prlimit", append([]string{limit, "--", os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), "SCALEGNN_AS_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("prlimit %s scalegnn %v hung; stderr:\n%s", limit, args, stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatalf("running prlimit %s scalegnn %v: %v", limit, args, err)
	}
	return 0, stderr.String()
}
