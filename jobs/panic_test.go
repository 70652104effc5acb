package jobs

import (
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/jobfile"
	"scalegnn/record"
)

// TestTrainPanicIsFailure checks that a panic during training (a GPU out
// of memory, which the command reports as one line) leaves summary.json
// "failed" with the panic's text, not "completed" with 0 epochs.
func TestTrainPanicIsFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	cfg := jobfile.DefaultConfig()
	cfg.Dataset.Source = jobfile.SourceSBM
	cfg.Dataset.NormalizeFeatures = false // as ParseConfig sets it for a generator
	cfg.Dataset.SBM.N = 300
	cfg.Train.Epochs = 3
	cfg.Output.Dir = dir
	j, err := Setup(&cfg, collectives.NewLocalWorld(1)[0], device.NewNative(1), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := j.OpenOutput(OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	j.Interrupt = func() string { panic("device: GPU 0 is out of memory") }
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Error("Train did not pass the panic on")
			}
		}()
		_, _ = j.Train()
	}()
	s := readSummary(t, dir)
	if s["status"] != string(record.StatusFailed) || !strings.Contains(s["message"].(string), "out of memory") {
		t.Errorf("summary after a panic: status %v, message %v; want failed with the panic's text", s["status"], s["message"])
	}
}
