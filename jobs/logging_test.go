package jobs

import (
	"testing"
)

func TestEpochFields(t *testing.T) {
	m := EpochMetrics{Epoch: 3, Loss: 1.5, SpMMSecMax: 2, SpMMSecMean: 1}
	keys := map[string]bool{}
	for _, f := range EpochFields(m) {
		keys[f.Key] = true
	}
	for _, k := range []string{"epoch", "loss", "time", "spmm_max", "spmm_mean", "gemm_max", "gemm_mean", "comm_max", "comm_mean", "other_max", "other_mean"} {
		if !keys[k] {
			t.Errorf("epoch log line lacks %q", k)
		}
	}
	if keys["test_acc"] {
		t.Error("accuracy logged on an epoch without evaluation")
	}
	m.SetAccuracies(0.5, 0.6, 0.7)
	keys = map[string]bool{}
	for _, f := range EpochFields(m) {
		keys[f.Key] = true
	}
	if !keys["train_acc"] || !keys["val_acc"] || !keys["test_acc"] {
		t.Error("accuracies missing on an evaluated epoch")
	}
}
