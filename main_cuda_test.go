package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/device"
	"scalegnn/internal/launch"
)

// TestCUDAMissing: runtime.device = "cuda" where CUDA cannot be used (no
// library, driver or GPU; CUDA_VISIBLE_DEVICES="" hides a GPU machine's)
// ends with a non-zero exit and one line, device's own error naming what
// is missing (scripts/badinput.sh runs it on 8 ranks).
func TestCUDAMissing(t *testing.T) {
	t.Setenv("CUDA_VISIBLE_DEVICES", "")
	_, derr := device.CUDADevices()
	if derr == nil {
		t.Skip("CUDA_VISIBLE_DEVICES=\"\" still shows a GPU")
	}
	cmd := exec.Command(os.Args[0], "-config", filepath.Join("testdata", "badinput", "cuda_missing.toml"))
	cmd.Env = append(os.Environ(), "SCALEGNN_AS_MAIN=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != int(launch.ExitFailed) {
		t.Fatalf("exit %v, want %d; stderr:\n%s", err, launch.ExitFailed, stderr.String())
	}
	lines := errorLines(stderr.String())
	want := `scalegnn: runtime.device = "cuda": ` + derr.Error()
	if len(lines) != 1 || lines[0] != want {
		t.Fatalf("want the one line %q, got:\n%s", want, stderr.String())
	}
	if !strings.Contains(lines[0], "cuda unavailable: ") {
		t.Errorf("%q does not say CUDA is unavailable", lines[0])
	}
	t.Log(lines[0])
}
