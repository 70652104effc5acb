package jobs

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"scalegnn/record"
)

func TestEpochFields(t *testing.T) {
	m := record.EpochMetrics{Epoch: 3, Loss: 1.5, SpMMSecMax: 2, SpMMSecMean: 1}
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

func TestNewLogger(t *testing.T) {
	if l := NewLogger(3, false, false); l.Core().Enabled(zapcore.ErrorLevel) {
		t.Error("rank 3 logs without verbose")
	}
	if l := NewLogger(0, false, false); !l.Core().Enabled(zapcore.InfoLevel) || l.Core().Enabled(zapcore.DebugLevel) {
		t.Error("rank 0 should log at info level")
	}

	var buf bytes.Buffer
	l := newLogger(zapcore.AddSync(&buf), 0, false, false)
	m := func() record.EpochMetrics {
		m := record.EpochMetrics{Epoch: 1, Loss: 1.94, EpochSec: 0.012}
		m.SetAccuracies(0.3, 0.25, 0)
		return m
	}()
	l.Info("epoch", EpochFields(m)...)
	l.Error("boom", zap.String("why", "test"))
	out := buf.String()
	for _, w := range []string{"INFO  epoch", `"epoch": 1`, `"loss": 1.94`, `"val_acc": 0.25`, `"time": "12ms"`, "ERROR  boom"} {
		if !strings.Contains(out, w) {
			t.Errorf("log lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, ".go:") || strings.Contains(out, "goroutine") {
		t.Errorf("log has a caller or stack trace:\n%s", out)
	}

	buf.Reset()
	newLogger(zapcore.AddSync(&buf), 5, true, false).Debug("hello")
	if !strings.Contains(buf.String(), `"rank": 5`) {
		t.Errorf("verbose log lacks the rank: %s", buf.String())
	}

	// -log json: one JSON object per line, the fields at the top level.
	buf.Reset()
	newLogger(zapcore.AddSync(&buf), 0, false, true).Info("epoch", EpochFields(m)...)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("JSON log line does not parse: %v: %s", err, buf.String())
	}
	if line["msg"] != "epoch" || line["level"] != "info" || line["epoch"] != 1.0 || line["val_acc"] != 0.25 {
		t.Errorf("JSON log line: %s", buf.String())
	}
}

func TestEpochFieldsWithoutEvaluation(t *testing.T) {
	for _, f := range EpochFields(record.EpochMetrics{Epoch: 2, Loss: 0.97, EpochSec: 0.012}) {
		if strings.HasSuffix(f.Key, "_acc") {
			t.Errorf("field %s on an epoch without evaluation", f.Key)
		}
	}
}
