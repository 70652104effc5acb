package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/grid"
)

// writeRun writes a run directory as Train and writeConfig do: config.toml
// naming the metrics file, the metrics, and summary.json unless grid is "".
func writeRun(t *testing.T, dir, metrics, gridText string, epochs int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if metrics != "" {
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[output]\nmetrics = \""+metrics+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		metrics = "metrics.jsonl"
	}
	mw, err := CreateMetrics(filepath.Join(dir, metrics))
	if err != nil {
		t.Fatal(err)
	}
	for e := 1; e <= epochs; e++ {
		if err := mw.Write(EpochMetrics{Epoch: e, Loss: 1 / float64(e), Steps: 1, EpochSec: float64(e)}); err != nil {
			t.Fatal(err)
		}
	}
	mw.Close()
	if gridText != "" {
		b, _ := json.Marshal(Result{Epochs: epochs, Grid: gridText, Ranks: 8, Mode: "minibatch"})
		if err := os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadRun(t *testing.T) {
	root := t.TempDir()
	shape := grid.Shape{D: 2, X: 2, Y: 2, Z: 1}
	done := filepath.Join(root, "done")
	writeRun(t, done, "m.jsonl", shape.String(), 3)
	for _, path := range []string{done, filepath.Join(done, "summary.json")} {
		r, err := ReadRun(path)
		if err != nil {
			t.Fatalf("ReadRun(%s): %v", path, err)
		}
		if r.Dir != done || r.MetricsPath != filepath.Join(done, "m.jsonl") || len(r.Metrics) != 3 || r.Metrics[2].EpochSec != 3 {
			t.Fatalf("ReadRun(%s) = %+v", path, r)
		}
		if r.Summary == nil || r.Grid != shape || r.Summary.Grid != shape.String() || r.Summary.Ranks != 8 || r.Summary.Mode != "minibatch" {
			t.Fatalf("ReadRun(%s): summary %+v, grid %v", path, r.Summary, r.Grid)
		}
	}
	// A metrics file named directly is read whatever config.toml says.
	other := filepath.Join(done, "other.jsonl")
	writeRunMetrics(t, other, 2)
	if r, err := ReadRun(other); err != nil || r.MetricsPath != other || len(r.Metrics) != 2 || r.Grid != shape {
		t.Fatalf("ReadRun(%s) = %+v, %v", other, r, err)
	}
	// A run without config.toml reads metrics.jsonl; one still running has
	// no summary; summary.json's older grid form XxYxZ means d = 1.
	running := filepath.Join(root, "running")
	writeRun(t, running, "", "", 2)
	if r, err := ReadRun(running); err != nil || r.Summary != nil || len(r.Metrics) != 2 || r.Grid != (grid.Shape{}) {
		t.Fatalf("ReadRun(running) = %+v, %v", r, err)
	}
	old := filepath.Join(root, "old")
	writeRun(t, old, "", "1x2x4", 1)
	if r, err := ReadRun(old); err != nil || r.Grid != (grid.Shape{D: 1, X: 1, Y: 2, Z: 4}) {
		t.Fatalf("ReadRun(old) = %+v, %v", r, err)
	}
}

func writeRunMetrics(t *testing.T, path string, epochs int) {
	t.Helper()
	mw, err := CreateMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Close()
	for e := 1; e <= epochs; e++ {
		if err := mw.Write(EpochMetrics{Epoch: e, EpochSec: 1}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadRunErrors: bad runs are one-line errors naming the file.
func TestReadRunErrors(t *testing.T) {
	root := t.TempDir()
	badGrid := filepath.Join(root, "badgrid")
	writeRun(t, badGrid, "", "2x2", 1)
	empty := filepath.Join(root, "empty")
	writeRun(t, empty, "", "2x2x2 (d=1)", 0)
	badConfig := filepath.Join(root, "badconfig")
	writeRun(t, badConfig, "", "2x2x2 (d=1)", 1)
	os.WriteFile(filepath.Join(badConfig, "config.toml"), []byte("[output\n"), 0o644)
	badSummary := filepath.Join(root, "badsummary")
	writeRun(t, badSummary, "", "2x2x2 (d=1)", 1)
	os.WriteFile(filepath.Join(badSummary, "summary.json"), []byte("{"), 0o644)
	for _, c := range []struct{ path, want string }{
		{filepath.Join(root, "missing"), "missing"},
		{badGrid, `summary.json: grid "2x2"`},
		{empty, "metrics.jsonl: no epochs"},
		{badConfig, "config.toml"},
		{badSummary, "summary.json"},
	} {
		_, err := ReadRun(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ReadRun(%s): error %v, want one line containing %q", c.path, err, c.want)
		}
	}
}

// TestSummaryReadsOldKeys: summaries written before the keys were
// snake_case (final_accuracy's Train, Val, Test; no status) still read.
func TestSummaryReadsOldKeys(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, "", "", 2)
	old := `{"epochs": 2, "final_loss": 0.5, "final_accuracy": {"Train": 1, "Val": 0.75, "Test": 0.8}, "grid": "1x1x1", "ranks": 1}`
	os.WriteFile(filepath.Join(dir, SummaryFile), []byte(old), 0o644)
	r, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Summary; s.Final.Train != 1 || s.Final.Val != 0.75 || s.Final.Test != 0.8 || s.Status != StatusCompleted || s.FinalLoss != 0.5 {
		t.Fatalf("old summary read as %+v", s)
	}
}
