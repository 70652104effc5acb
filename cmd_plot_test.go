package main

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/internal/launch"
	"scalegnn/record"
)

// writePlotRun writes a run directory with epochs of metrics, accuracies
// every other epoch and a diverged (NaN) last loss.
func writePlotRun(t *testing.T, dir string, epochs int) {
	t.Helper()
	mw, err := record.CreateMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Close()
	for e := 1; e <= epochs; e++ {
		m := record.EpochMetrics{Epoch: e, Loss: 2 / float64(e), Steps: 1, EpochSec: 0.02 + 0.001*float64(e%3)}
		if e == epochs {
			m.Loss = math.NaN()
		}
		if e%2 == 0 {
			m.SetAccuracies(0.5+0.01*float64(e), 0.4+0.01*float64(e), 0.45+0.01*float64(e))
		}
		if err := mw.Write(m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlot: scalegnn plot draws two runs into a PNG that decodes, of the
// size drawn; bad arguments and a missing run fail with one line.
func TestPlot(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	writePlotRun(t, a, 30)
	writePlotRun(t, b, 20)
	out := filepath.Join(root, "curves.png")
	var stdout, stderr bytes.Buffer
	if code := runPlot([]string{a, b, "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("curves.png does not decode: %v", err)
	}
	// 15 x 4.5 inches at vgimg's default 96 dpi; three panels of lines
	// make a file of tens of kilobytes, an empty canvas a few.
	if bnd := img.Bounds(); bnd.Dx() != 1440 || bnd.Dy() != 432 || st.Size() < 20000 {
		t.Fatalf("curves.png: %v, %d bytes", img.Bounds(), st.Size())
	}
	if !strings.Contains(stdout.String(), "(2 runs)") {
		t.Errorf("stdout %q", stdout.String())
	}

	for _, c := range []struct {
		args []string
		code launch.ExitCode
		want string
	}{
		{nil, launch.ExitUsage, "name at least one run directory"},
		{[]string{filepath.Join(root, "missing")}, launch.ExitFailed, "missing"},
		{[]string{a, "-o", filepath.Join(root, "x.bmp")}, launch.ExitFailed, "expected .png, .svg or .pdf"},
	} {
		stderr.Reset()
		if code := runPlot(c.args, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("plot %v: exit %d, %q; want %d and %q", c.args, code, stderr.String(), c.code, c.want)
		}
	}
}
