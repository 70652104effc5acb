package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/jobfile"
	"scalegnn/record"
)

// TestPredictEveryMethod: the model output.save_model keeps is usable in
// every training method. scalegnn predict with the job's own file writes
// probabilities whose argmax over the test split is the run's final test
// accuracy exactly, and -embeddings 0 writes the first hidden layer. The
// same checkpoint predicted by the full-graph 3D job (the grid's
// evaluation) gives the same probabilities within 1e-5 of the largest:
// each method's own evaluation (neighbor mode's halo, isolated mode's
// layer-wise inference, 1.5D's) computes what full-graph evaluation
// does, and a checkpoint moves between methods.
func TestPredictEveryMethod(t *testing.T) {
	methods := []struct{ name, train string }{
		{"fullgraph 3d", ""},
		{"minibatch 4d", "mode = \"minibatch\"\nbatch_size = 1000\n"},
		{"neighbor", "mode = \"neighbor\"\nbatch_size = 64\nfanouts = [10, 5]\n"},
		{"isolated", "mode = \"isolated\"\n"},
		{"isolated layer-wise", "mode = \"isolated\"\n[grappa]\nevaluation = \"layerwise\"\nchunks = 3\n"},
		{"isolated out of core", "mode = \"isolated\"\n[grappa]\nout_of_core = true\npartitions = 2\n[permute]\nscheme = \"single\"\n"},
		{"fullgraph 1.5d", "algorithm = \"1.5d\"\n"},
		{"minibatch 1.5d", "mode = \"minibatch\"\nalgorithm = \"1.5d\"\nbatch_size = 1000\n"},
	}
	// Every method with GCN layers, then with GAT layers (3 heads of 5:
	// the first hidden layer is 15 wide).
	type testCase struct{ name, model, train string }
	var cases []testCase
	for _, layer := range []string{"", "layer = \"sage\"\n", "layer = \"gat\"\nhidden = 5\nheads = 3\n"} {
		for _, m := range methods {
			name := m.name
			switch {
			case strings.Contains(layer, "gat"):
				name = "gat " + name
			case strings.Contains(layer, "sage"):
				name = "sage " + name
			}
			cases = append(cases, testCase{name, layer, m.train})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			job := filepath.Join(dir, "job.toml")
			text := fmt.Sprintf("[dataset]\nsource = \"cora\"\n[model]\n%s[train]\nepochs = 10\neval_every = 5\n%s[output]\ndir = %q\nsave_model = true\n",
				tc.model, tc.train, filepath.Join(dir, "run"))
			if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, stderr := runMain(t, "-config", job); code != 0 {
				t.Fatalf("training: exit %d\n%s", code, stderr)
			}
			preds := filepath.Join(dir, "preds.npy")
			model := filepath.Join(dir, "run", "model")
			if code, stderr := runMain(t, "predict", "-config", job, "-checkpoint", model, "-out", preds); code != 0 {
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
			grid := filepath.Join(dir, "grid.toml")
			perm := "" // the checkpoint's vertex order, which the job must name
			if strings.Contains(tc.train, "[permute]") {
				perm = "[permute]\nscheme = \"single\"\n"
			}
			text = fmt.Sprintf("[dataset]\nsource = \"cora\"\n[model]\n%s%s[output]\ndir = %q\n", tc.model, perm, filepath.Join(dir, "grid"))
			if err := os.WriteFile(grid, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			gridPreds := filepath.Join(dir, "grid.npy")
			if code, stderr := runMain(t, "predict", "-config", grid, "-checkpoint", model, "-out", gridPreds); code != 0 {
				t.Fatalf("predict with the full-graph 3D job: exit %d\n%s", code, stderr)
			}
			_, p := readNPY(t, preds)
			_, q := readNPY(t, gridPreds)
			if d := maxRelDiff(p, q); !(d <= 1e-5) {
				t.Errorf("the method's probabilities differ from the 3D grid's by %.2g of the largest", d)
			}
			emb := filepath.Join(dir, "emb.npy")
			if code, stderr := runMain(t, "predict", "-config", job, "-checkpoint", model, "-out", emb, "-embeddings", "0"); code != 0 {
				t.Fatalf("predict -embeddings 0: exit %d\n%s", code, stderr)
			}
			width := cfg.Model.Hidden * cfg.Model.Heads // a GAT layer concatenates its heads
			if shape, _ := readNPY(t, emb); len(shape) != 2 || shape[0] != g.N || shape[1] != width {
				t.Errorf("embeddings shape %v, want [%d %d]", shape, g.N, width)
			}
		})
	}
}

// maxRelDiff is the largest |p_i - q_i| relative to q's largest magnitude
// (NaN, and so a failure, when the lengths differ).
func maxRelDiff(p, q []float32) float64 {
	if len(p) != len(q) {
		return math.NaN()
	}
	scale, worst := 0.0, 0.0
	for _, v := range q {
		scale = max(scale, math.Abs(float64(v)))
	}
	for i := range p {
		worst = max(worst, math.Abs(float64(p[i]-q[i]))/scale)
	}
	return worst
}
