package jobs

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/permute"
	"scalegnn/prepared"
	"scalegnn/record"
)

// trainLocal runs the job on goroutines as ranks and returns rank 0's
// result and metrics.
func trainLocal(t *testing.T, cfg jobfile.Config) (*record.Result, []record.EpochMetrics) {
	t.Helper()
	n := cfg.Grid.Ranks()
	var res *record.Result
	for r, err := range collectives.RunLocal(n, func(w collectives.Comm) error {
		c := cfg
		j, err := Setup(&c, w, device.NewNative(1), zap.NewNop())
		if err != nil {
			return err
		}
		out, err := j.Train()
		if w.Rank() == 0 {
			res = out
		}
		return err
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	ms, err := record.ReadMetrics(cfg.MetricsPath())
	if err != nil {
		t.Fatal(err)
	}
	return res, ms
}

// TestPreparedTrainsLikeInMemory trains the same job from the graph in
// memory and from a prepared dataset of it, on grids whose sizes the block
// count does not divide, and requires identical losses and accuracies.
func TestPreparedTrainsLikeInMemory(t *testing.T) {
	for _, c := range []struct {
		scheme    permute.Scheme
		grid      jobfile.GridConfig
		blocks    int
		minibatch bool
	}{
		{permute.Double, jobfile.GridConfig{X: 2, Y: 2, Z: 2, D: 1}, 3, false},
		{permute.Single, jobfile.GridConfig{X: 1, Y: 2, Z: 3, D: 1}, 4, false},
		{permute.None, jobfile.GridConfig{X: 1, Y: 1, Z: 1, D: 1}, 2, false},
		// Mini-batches cut from prepared shards, 2 replicas, bf16 sums.
		{permute.Double, jobfile.GridConfig{X: 1, Y: 2, Z: 1, D: 2}, 3, true},
	} {
		t.Run(fmt.Sprintf("%s/%dx%dx%dx%d", c.scheme, c.grid.D, c.grid.X, c.grid.Y, c.grid.Z), func(t *testing.T) {
			tmp := t.TempDir()
			cfg := jobfile.DefaultConfig()
			cfg.Train.Epochs, cfg.Train.EvalEvery = 3, 1
			if c.minibatch {
				cfg.Train.Mode, cfg.Train.BatchRatio, cfg.Train.CommDtype = gcn.MiniBatch, 0.4, collectives.BF16
			}
			cfg.Grid, cfg.Permute = c.grid, jobfile.PermuteConfig{Scheme: c.scheme, Seed: 5}
			cfg.Output.Dir = filepath.Join(tmp, "mem")
			want, wantM := trainLocal(t, cfg)

			g, err := dataset.Builtin("cora")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(tmp, "cora-prepared")
			if _, err := prepared.Prepare(&prepared.GraphInput{G: g}, dir, prepared.Options{Blocks: c.blocks, Scheme: c.scheme, Seed: 5}); err != nil {
				t.Fatal(err)
			}
			cfg.Dataset.Source, cfg.Dataset.Path = jobfile.SourcePrepared, dir
			cfg.Output.Dir = filepath.Join(tmp, "prepared")
			got, gotM := trainLocal(t, cfg)
			if got.FinalLoss != want.FinalLoss || got.Final != want.Final {
				t.Fatalf("prepared: loss %v, accuracy %+v; in memory: loss %v, accuracy %+v", got.FinalLoss, got.Final, want.FinalLoss, want.Final)
			}
			for e := range wantM {
				if wantM[e].Loss != gotM[e].Loss {
					t.Fatalf("epoch %d: loss %v from the prepared dataset, %v in memory", e+1, gotM[e].Loss, wantM[e].Loss)
				}
			}
		})
	}
}

// TestPreparedPermutationMismatch: the permutation is fixed at prepare
// time, and a job that asks for another one is told which to set.
func TestPreparedPermutationMismatch(t *testing.T) {
	m := &prepared.Meta{Permute: prepared.PermuteMeta{Scheme: permute.Double, Seed: 7}}
	cfg := jobfile.DefaultConfig()
	cfg.Path, cfg.Dataset.Path = "job.toml", "data/ds"
	for _, p := range []jobfile.PermuteConfig{{Scheme: permute.None, Seed: 7}, {Scheme: permute.Double, Seed: 8}, {Scheme: permute.Single, Seed: 7}} {
		cfg.Permute = p
		err := CheckPreparedPermutation(&cfg, m)
		if err == nil || !strings.Contains(err.Error(), `set [permute] scheme = "double", seed = 7`) || !strings.Contains(err.Error(), "job.toml") {
			t.Errorf("%+v: %v", p, err)
		}
	}
	cfg.Permute = jobfile.PermuteConfig{Scheme: permute.Double, Seed: 7}
	if err := CheckPreparedPermutation(&cfg, m); err != nil {
		t.Error(err)
	}
	m.Permute = prepared.PermuteMeta{Scheme: permute.None, Seed: 1}
	cfg.Permute = jobfile.PermuteConfig{Scheme: permute.None, Seed: 7}
	if err := CheckPreparedPermutation(&cfg, m); err != nil {
		t.Errorf("the seed of no permutation does not matter: %v", err)
	}
}
