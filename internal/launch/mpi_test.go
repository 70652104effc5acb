package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"scalegnn/collectives"
)

// WithMPI starts MPI, which a process can do once: the tests run it in a
// child process, the test binary itself as an MPI singleton, with
// childEnv naming the body to run.
const childEnv = "SCALEGNN_LAUNCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if body, ok := childBodies[os.Getenv(childEnv)]; ok {
		os.Exit(int(WithMPI(os.Stderr, body)))
	}
	os.Exit(m.Run())
}

// childBodies are the commands the child processes run under WithMPI.
var childBodies = map[string]func(collectives.Comm, func(error) error) error{
	"ok": func(collectives.Comm, func(error) error) error { return nil },
	"agreed": func(_ collectives.Comm, agree func(error) error) error {
		if err := agree(nil); err != nil {
			return fmt.Errorf("agree(nil) = %v", err)
		}
		return agree(errors.New("job.toml: a bad job file"))
	},
	"own": func(collectives.Comm, func(error) error) error {
		return errors.New("this rank's own failure")
	},
	"other rank": func(collectives.Comm, func(error) error) error {
		return fmt.Errorf("all-reduce: %w", collectives.ErrOtherRank)
	},
	"panic": func(collectives.Comm, func(error) error) error { panic("injected") },
}

// TestWithMPIExitCodes: each way a command ends under WithMPI gives its
// exit code and at most one line: success, an error every rank agreed on
// (one line from the lowest failing rank), this rank's own error (abort),
// another rank's failure (that rank reports), a panic (internal error).
func TestWithMPIExitCodes(t *testing.T) {
	for _, c := range []struct {
		body string
		code ExitCode
		line string // "": no output
	}{
		{"ok", ExitOK, ""},
		{"agreed", ExitFailed, "scalegnn: job.toml: a bad job file"},
		{"own", ExitFailed, "scalegnn: rank 0: this rank's own failure"},
		{"other rank", ExitFailed, ""},
		{"panic", ExitInternal, "scalegnn: rank 0: internal error: injected (set SCALEGNN_TRACEBACK=1 for a stack trace)"},
	} {
		t.Run(c.body, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+c.body, "SCALEGNN_TRACEBACK=")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != int(c.code) {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, stderr.String())
			}
			want := ""
			if c.line != "" {
				want = c.line + "\n"
			}
			if got := stderr.String(); got != want {
				t.Errorf("stderr %q, want %q", got, want)
			}
		})
	}
}
