package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"scalegnn/jobfile"
	"scalegnn/record"
)

// TestCAGNETKeepCLI: the command line keeps a 1.5D run as it keeps a 3D
// one. A 1.5D Cora job (one rank) with [checkpoint] every = 5 and
// output.save_model is resumed with -resume from its epoch-5 checkpoint
// into another directory and ends with the same metrics bit for bit; and
// scalegnn predict with its saved model writes probabilities whose
// argmax over the test split is the run's test accuracy exactly.
func TestCAGNETKeepCLI(t *testing.T) {
	dir := t.TempDir()
	job := func(name, extra string) string {
		path := filepath.Join(dir, name+".toml")
		data := fmt.Sprintf("[dataset]\nsource = \"cora\"\n[train]\nalgorithm = \"1.5d\"\nepochs = 10\neval_every = 5\n[permute]\nscheme = \"single\"\n[output]\ndir = %q\nsave_model = true\n%s",
			filepath.Join(dir, name), extra)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a := job("a", "[checkpoint]\nevery = 5\n")
	if code, stderr := runMain(t, "-config", a); code != 0 {
		t.Fatalf("training: exit %d\n%s", code, stderr)
	}
	b := job("b", "")
	if code, stderr := runMain(t, "-config", b, "-resume", filepath.Join(dir, "a", "checkpoints", "ckpt-00000005")); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	ma, err := record.ReadMetrics(filepath.Join(dir, "a", "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	mb, err := record.ReadMetrics(filepath.Join(dir, "b", "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(mb) != 5 || mb[0].Epoch != 6 {
		t.Fatalf("resumed run wrote %d epochs of metrics, want epochs 6 to 10", len(mb))
	}
	for _, m := range mb {
		w := ma[m.Epoch-1]
		if m.Loss != w.Loss || (m.TestAcc == nil) != (w.TestAcc == nil) || (m.TestAcc != nil && *m.TestAcc != *w.TestAcc) {
			t.Errorf("epoch %d: resumed loss %v, uninterrupted %v", m.Epoch, m.Loss, w.Loss)
		}
	}
	preds := filepath.Join(dir, "preds.npy")
	if code, stderr := runMain(t, "predict", "-config", a, "-checkpoint", filepath.Join(dir, "a", "model"), "-out", preds); code != 0 {
		t.Fatalf("predict: exit %d\n%s", code, stderr)
	}
	cfg, err := jobfile.LoadConfig(a)
	if err != nil {
		t.Fatal(err)
	}
	_, acc := predictedAccuracy(t, cfg, preds)
	if got, want := acc, *ma[len(ma)-1].TestAcc; got != want {
		t.Errorf("argmax of preds.npy over the test split: accuracy %v, the run's test accuracy %v", got, want)
	}
}
