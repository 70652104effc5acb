package record

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sampleMetrics() []EpochMetrics {
	var ms []EpochMetrics
	for e := 1; e <= 3; e++ {
		m := EpochMetrics{
			Epoch: e, Loss: 1.94 / float64(e), EpochSec: 0.012,
			SpMMSecMax: 0.004, SpMMSecMean: 0.003, GEMMSecMax: 0.002, GEMMSecMean: 0.0015,
			CommSecMax: 0.005, CommSecMean: 0.004, OtherSecMax: 0.001, OtherSecMean: 0.0005,
		}
		if e != 2 {
			m.SetAccuracies(0.3*float64(e), 0.25, 0)
		}
		ms = append(ms, m)
	}
	return ms
}

func TestMetricsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "metrics.jsonl")
	w, err := CreateMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	want := sampleMetrics()
	for i, m := range want {
		if err := w.Write(m); err != nil {
			t.Fatal(err)
		}
		// Live: every line is in the file as soon as Write returns.
		got, err := ReadMetrics(path)
		if err != nil || len(got) != i+1 {
			t.Fatalf("after %d writes ReadMetrics gives %d lines, %v", i+1, len(got), err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Write(want[0]); err == nil {
		t.Error("Write after Close succeeded")
	}
	got, err := ReadMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
}

func TestMetricsLineFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	w, err := CreateMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sampleMetrics()[:2] {
		if err := w.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines:\n%s", len(lines), b)
	}
	want := `{"epoch":1,"loss":1.94,"train_acc":0.3,"val_acc":0.25,"test_acc":0,"epoch_s":0.012,"steps":0,` +
		`"spmm_s_max":0.004,"spmm_s_mean":0.003,"gemm_s_max":0.002,"gemm_s_mean":0.0015,` +
		`"comm_s_max":0.005,"comm_s_mean":0.004,"dp_s_max":0,"dp_s_mean":0,"other_s_max":0.001,"other_s_mean":0.0005,` +
		`"sample_wait_s_max":0,"sample_wait_s_mean":0,"sample_s_max":0,"sample_s_mean":0,"eval_s":0,` +
		`"pmm_bytes":0,"comm_3d_bytes":0,"dp_bytes":0}`
	if lines[0] != want {
		t.Errorf("line 1:\n got %s\nwant %s", lines[0], want)
	}
	// Epoch 2 was not evaluated: no accuracies at all.
	if strings.Contains(lines[1], "acc") {
		t.Errorf("line 2 has accuracies: %s", lines[1])
	}
}

func TestMetricsNonFinite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	w, err := CreateMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(EpochMetrics{Epoch: 1, Loss: math.NaN(), EpochSec: math.Inf(1)}); err != nil {
		t.Fatalf("a diverged epoch must still be written: %v", err)
	}
	w.Close()
	got, err := ReadMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !math.IsNaN(got[0].Loss) || !math.IsNaN(got[0].EpochSec) {
		t.Errorf("got %+v, want NaN loss and time", got)
	}
}

func TestReadMetricsTolerance(t *testing.T) {
	dir := t.TempDir()
	good := `{"epoch":1,"loss":1.5,"epoch_s":0.1,"future_field":3}` + "\n"
	for _, test := range []struct {
		name, data string
		n          int
		wantErr    string
	}{
		{"unknown fields ignored", good, 1, ""},
		{"blank lines", "\n" + good + "\n\n" + good, 2, ""},
		{"cut last line", good + `{"epoch":2,"lo`, 1, ""},
		{"bad middle line", good + "{oops\n" + good, 1, "bad middle line.jsonl: line 2"},
	} {
		path := filepath.Join(dir, test.name+".jsonl")
		if err := os.WriteFile(path, []byte(test.data), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadMetrics(path)
		if len(got) != test.n {
			t.Errorf("%s: read %d epochs, want %d", test.name, len(got), test.n)
		}
		switch {
		case test.wantErr == "" && err != nil:
			t.Errorf("%s: %v", test.name, err)
		case test.wantErr != "" && (err == nil || !strings.Contains(err.Error(), test.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", test.name, err, test.wantErr)
		}
	}
	if _, err := ReadMetrics(filepath.Join(dir, "missing.jsonl")); err == nil {
		t.Error("no error for a missing file")
	}
}
