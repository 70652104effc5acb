package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/dataset"
	"scalegnn/jobfile"
	"scalegnn/npy"
	"scalegnn/record"
)

// coraJob writes a 1-rank Cora job of 30 epochs into dir with the given
// extra TOML and output.dir dir/out.
func coraJob(t *testing.T, dir, out, extra string) string {
	t.Helper()
	path := filepath.Join(dir, out+".toml")
	job := fmt.Sprintf("[dataset]\nsource = \"cora\"\n[train]\nepochs = 30\neval_every = 10\n[output]\ndir = %q\n%s", filepath.Join(dir, out), extra)
	if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readNPY(t *testing.T, path string) ([]int, []float32) {
	t.Helper()
	f, err := npy.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, err := f.ReadAllFloat32()
	if err != nil {
		t.Fatal(err)
	}
	return f.Shape, x
}

// TestPredictMatchesTestAccuracy: predict with the saved model writes
// N × classes probabilities in vertex order whose argmax over the test
// split gives exactly the run's final test accuracy, and layer 0's
// embeddings as N × hidden.
func TestPredictMatchesTestAccuracy(t *testing.T) {
	dir := t.TempDir()
	job := coraJob(t, dir, "run", "save_model = true\n")
	if code, stderr := runMain(t, "-config", job); code != 0 {
		t.Fatalf("training: exit %d\n%s", code, stderr)
	}
	preds := filepath.Join(dir, "preds.npy")
	if code, stderr := runMain(t, "predict", "-config", job, "-checkpoint", filepath.Join(dir, "run", "model"), "-out", preds); code != 0 {
		t.Fatalf("predict: exit %d\n%s", code, stderr)
	}
	cfg, err := jobfile.LoadConfig(job)
	if err != nil {
		t.Fatal(err)
	}
	g, acc := predictedAccuracy(t, cfg, preds)
	run, err := record.ReadRun(filepath.Join(dir, "run"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := acc, run.Summary.Final.Test; got != want {
		t.Errorf("argmax of preds.npy over the test split: accuracy %v, the run's test accuracy %v", got, want)
	}
	emb := filepath.Join(dir, "emb.npy")
	if code, stderr := runMain(t, "predict", "-config", job, "-checkpoint", filepath.Join(dir, "run", "model"), "-out", emb, "-embeddings", "0"); code != 0 {
		t.Fatalf("predict -embeddings 0: exit %d\n%s", code, stderr)
	}
	if shape, _ := readNPY(t, emb); len(shape) != 2 || shape[0] != g.N || shape[1] != cfg.Model.Hidden {
		t.Errorf("embeddings shape %v, want [%d %d]", shape, g.N, cfg.Model.Hidden)
	}
	if code, stderr := runMain(t, "predict", "-config", job, "-checkpoint", filepath.Join(dir, "run", "model"), "-embeddings", "1"); code == 0 || !strings.Contains(stderr, "hidden layers 0 to 0") {
		t.Errorf("predict -embeddings 1 of a 2-layer model: exit %d, stderr %q", code, stderr)
	}
	if code, stderr := runMain(t, "predict", "-config", job, "-checkpoint", filepath.Join(dir, "run", "model"), "-embeddings", "-1"); code == 0 ||
		!strings.Contains(stderr, "-embeddings -1: model.layers = 2 (output_head = false) has hidden layers 0 to 0") {
		t.Errorf("predict -embeddings -1: exit %d, stderr %q", code, stderr)
	}
}

// TestResumeIsExact: a run resumed from its checkpoint of epoch 10 trains
// epochs 11 to 30 exactly as the run that went on, appending to the
// metrics it had up to the checkpoint (lines after it are dropped).
func TestResumeIsExact(t *testing.T) {
	dir := t.TempDir()
	a := coraJob(t, dir, "a", "[checkpoint]\nevery = 10\n")
	if code, stderr := runMain(t, "-config", a); code != 0 {
		t.Fatalf("training: exit %d\n%s", code, stderr)
	}
	b := coraJob(t, dir, "b", fmt.Sprintf("[checkpoint]\nevery = 10\ndir = %q\n", filepath.Join(dir, "a", "checkpoints")))
	if err := os.MkdirAll(filepath.Join(dir, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	// b's metrics as a run killed at epoch 15 left them.
	data, _ := os.ReadFile(filepath.Join(dir, "a", "metrics.jsonl"))
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(filepath.Join(dir, "b", "metrics.jsonl"), []byte(strings.Join(lines[:15], "")+`{"epoch": 16, "lo`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr := runMain(t, "-config", b, "-resume", filepath.Join(dir, "a", "checkpoints", "ckpt-00000010")); code != 0 {
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
	if len(ma) != len(mb) {
		t.Fatalf("resumed run has %d epochs of metrics, want %d", len(mb), len(ma))
	}
	for i := range ma {
		if ma[i].Epoch != mb[i].Epoch || ma[i].Loss != mb[i].Loss || (ma[i].TestAcc == nil) != (mb[i].TestAcc == nil) ||
			(ma[i].TestAcc != nil && *ma[i].TestAcc != *mb[i].TestAcc) {
			t.Errorf("epoch %d: resumed loss %v, uninterrupted %v", ma[i].Epoch, mb[i].Loss, ma[i].Loss)
		}
	}
}

// predictedAccuracy reads the probabilities scalegnn predict wrote for
// cfg's graph (N × classes, each row summing to 1) and returns the graph
// and the accuracy of their argmax over the test split.
func predictedAccuracy(t *testing.T, cfg *jobfile.Config, preds string) (*dataset.Graph, float64) {
	t.Helper()
	g, err := jobfile.LoadGraph(cfg.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	shape, p := readNPY(t, preds)
	if len(shape) != 2 || shape[0] != g.N || shape[1] != g.Classes {
		t.Fatalf("%s shape %v, want [%d %d]", preds, shape, g.N, g.Classes)
	}
	hits, n := 0, 0
	for v := range g.N {
		row := p[v*g.Classes : (v+1)*g.Classes]
		best, sum := 0, float32(0)
		for c, x := range row {
			sum += x
			if x > row[best] {
				best = c
			}
		}
		if sum < 0.999 || sum > 1.001 {
			t.Fatalf("%s: vertex %d: probabilities sum to %v", preds, v, sum)
		}
		if g.Test[v] {
			n++
			if int32(best) == g.Labels[v] {
				hits++
			}
		}
	}
	return g, float64(hits) / float64(n)
}
