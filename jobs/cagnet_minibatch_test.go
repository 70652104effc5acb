package jobs

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"go.uber.org/zap"

	"scalegnn/checkpoint"
	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/method"
	"scalegnn/perfmodel"
	"scalegnn/plan"
)

// TestCAGNETMiniBatchTrainsLike4D: Cora as a mini-batch job with 2
// replicas trains with 1.5D on 4 ranks each (c = 2, 2 process rows,
// single permutation, dropout) like 4D on 2 replicas of 2×2×1: the same
// batches (one sampler rule), so losses of every epoch within 1e-5
// relative and the same accuracies (compare -tol 1e-5, -acc-tol 0), GCN
// and SAGE; the summary records the algorithm, the replication and d.
func TestCAGNETMiniBatchTrainsLike4D(t *testing.T) {
	if testing.Short() {
		t.Skip("trains Cora four times on 8 in-process ranks")
	}
	tmp := t.TempDir()
	for _, layer := range []string{"gcn", "sage"} {
		extra := "mode = \"minibatch\"\nbatch_size = 700\nsteps_per_epoch = 2\n[model]\nlayer = \"" + layer + "\"\ndropout = 0.5\n[permute]\nscheme = \"single\"\n"
		four := isolatedConfig(t, extra, filepath.Join(tmp, layer+"-4d"))
		four.Grid.D, four.Grid.X, four.Grid.Y, four.Grid.Z = 2, 2, 2, 1
		_, want := trainLocal(t, four)
		cagnet := isolatedConfig(t, "algorithm = \"1.5d\"\n"+extra, filepath.Join(tmp, layer+"-15d"))
		cagnet.Grid.D, cagnet.Grid.X, cagnet.Grid.Replication = 2, 4, 2
		res, got := trainLocal(t, cagnet)
		if len(got) != len(want) {
			t.Fatalf("%s: %d epochs, want %d", layer, len(got), len(want))
		}
		acc := func(p *float64) float64 {
			if p == nil {
				return -1
			}
			return *p
		}
		for e := range want {
			a, b := want[e], got[e]
			if d := math.Abs(a.Loss-b.Loss) / math.Max(1, math.Abs(a.Loss)); !(d <= 1e-5) ||
				acc(a.ValAcc) != acc(b.ValAcc) || acc(a.TrainAcc) != acc(b.TrainAcc) || acc(a.TestAcc) != acc(b.TestAcc) {
				t.Errorf("%s epoch %d: 4D loss %.9g val %.4g train %.4g test %.4g; 1.5D loss %.9g val %.4g train %.4g test %.4g",
					layer, e+1, a.Loss, acc(a.ValAcc), acc(a.TrainAcc), acc(a.TestAcc), b.Loss, acc(b.ValAcc), acc(b.TrainAcc), acc(b.TestAcc))
			}
			if b.DPBytes == 0 {
				t.Errorf("%s epoch %d: no bytes on the replicas' communicator", layer, e+1)
			}
		}
		if res.Algorithm != "1.5d" || res.Replication != 2 || res.Grid != "4x1x1 (d=2)" {
			t.Errorf("%s: summary algorithm %q replication %d grid %q, want 1.5d, 2 and 4x1x1 (d=2)", layer, res.Algorithm, res.Replication, res.Grid)
		}
	}
}

// TestAutoMiniBatchLists15D: for a mini-batch job, grid.auto's candidates
// (ChooseGrid) hold the 4D grids and the 1.5D arrangements of every Gd
// dividing the ranks, only 1.5D's when train.algorithm = "1.5d"; the
// chosen 1.5D arrangement is written back as grid.d, grid.x = P and
// grid.replication, and the resolved job validates.
func TestAutoMiniBatchLists15D(t *testing.T) {
	for _, alg := range []string{"", "1.5d"} {
		body := "[dataset]\nsource = \"sbm\"\n[dataset.sbm]\nnodes = 20000\n[train]\nmode = \"minibatch\"\nbatch_size = 2000\n"
		if alg != "" {
			body += "algorithm = \"" + alg + "\"\n"
		}
		cfg, err := jobfile.ParseConfig("auto.toml", []byte(body+"[grid]\nauto = true\n"))
		if err != nil {
			t.Fatal(err)
		}
		gs, err := plan.EstimateGraphSize(cfg.Dataset)
		if err != nil {
			t.Fatal(err)
		}
		preds, _, err := plan.ChooseGrid(cfg, gs, perfmodel.DefaultMachine(), 8, 8, 0)
		if err != nil {
			t.Fatal(err)
		}
		ds := map[method.Algorithm]map[int]bool{}
		for _, p := range preds {
			if ds[p.Algorithm] == nil {
				ds[p.Algorithm] = map[int]bool{}
			}
			ds[p.Algorithm][p.Shape.D] = true
		}
		for _, d := range []int{1, 2, 4, 8} {
			if !ds[method.CAGNET][d] {
				t.Errorf("algorithm %q: no 1.5D prediction with Gd = %d among %d", alg, d, len(preds))
			}
		}
		if (alg == "") != (len(ds[method.Plexus]) > 0) || len(ds) > 2 {
			t.Errorf("algorithm %q: predictions of %v", alg, ds)
		}
		if alg == "" {
			continue
		}
		if err := plan.ResolveAutoGrid(cfg, 8, 8, nil, zap.NewNop()); err != nil {
			t.Fatal(err)
		}
		g := cfg.Grid
		if cfg.Method().Algorithm() != method.CAGNET || g.Auto || g.D*g.X != 8 || g.Y != 1 || g.Z != 1 || g.X%max(g.Replication, 1) != 0 {
			t.Errorf("chose %s %+v, want 1.5d with grid.d·x = 8", cfg.Method().Algorithm(), g)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("the resolved job no longer validates: %v", err)
		}
	}
}

// mbKeepConfig is keepConfig's Cora job as mini-batches (batch 700, 2
// steps per epoch) on d replicas: 1.5D of p ranks with replication c, or
// 4D with 2×2×1 replicas (c = 0).
func mbKeepConfig(d, p, c int, dir string) jobfile.Config {
	cfg := keepConfig(keepGrid{p: p, c: c, x: 2, y: 2, z: 1}, dir)
	cfg.Train.Mode, cfg.Train.BatchSize, cfg.Train.StepsPerEpoch = gcn.MiniBatch, 700, 2
	cfg.Grid.D = d
	return cfg
}

// TestCAGNETMiniBatchResume: a 1.5D mini-batch run (2 replicas of 4
// ranks, c = 2) checkpointed after epoch 3 of 6 and resumed trains epochs
// 4 to 6 like the run that went on, bit for bit with the final weights;
// into 4D (d = 2, 2×2×1) and from a 4D checkpoint within 1e-5 (the same
// batches: the step is in the checkpoint); and a SIGTERM at the third
// step (epoch 2's first of two) stops with a checkpoint that resumes the
// epoch's second step bit for bit (but for the interrupted epoch's loss,
// see below).
func TestCAGNETMiniBatchResume(t *testing.T) {
	if testing.Short() {
		t.Skip("trains Cora seven times on 8 in-process ranks")
	}
	tmp := t.TempDir()
	for _, tc := range []struct {
		name     string
		from, to [2]int // p, c (c = 0: 4D)
		tol      float64
	}{
		{"1.5d", [2]int{4, 2}, [2]int{4, 2}, 0},
		{"1.5d to 4d", [2]int{4, 2}, [2]int{4, 0}, 1e-5},
		{"4d to 1.5d", [2]int{4, 0}, [2]int{4, 2}, 1e-5},
	} {
		full := mbKeepConfig(2, tc.from[0], tc.from[1], filepath.Join(tmp, tc.name, "full"))
		full.Checkpoint, full.Output.SaveModel = jobfile.CheckpointConfig{Every: 3}, true
		want, _ := runKeep(t, full, "", 0)
		ckpt := filepath.Join(full.CheckpointDir(), checkpoint.Name(6)) // named by step: 2 per epoch
		resumed := mbKeepConfig(2, tc.to[0], tc.to[1], filepath.Join(tmp, tc.name, "resumed"))
		resumed.Output.SaveModel = true
		got, _ := runKeep(t, resumed, ckpt, 0)
		sameEpochs(t, tc.name, got, want, 4, tc.tol)
		sameWeights(t, tc.name, modelWeights(t, resumed.ModelDir()), modelWeights(t, full.ModelDir()), tc.tol)
	}
	want, _ := runKeep(t, mbKeepConfig(2, 4, 2, filepath.Join(tmp, "signal", "full")), "", 0)
	stopped := mbKeepConfig(2, 4, 2, filepath.Join(tmp, "signal", "stopped"))
	stopped.Checkpoint = jobfile.CheckpointConfig{Every: 100}
	ms, err := runKeep(t, stopped, "", 3)
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Checkpoint == "" || ie.Epoch != 2 || ie.Step != 3 || len(ms) != 1 {
		t.Fatalf("interrupted run: error %v, %d epochs of metrics; want an InterruptedError at epoch 2, step 3 with a checkpoint, and 1 epoch", err, len(ms))
	}
	got, _ := runKeep(t, mbKeepConfig(2, 4, 2, filepath.Join(tmp, "signal", "resumed")), ie.Checkpoint, 0)
	// The interrupted epoch's loss is the mean of the losses of its steps
	// over the replicas, but a checkpoint holds rank 0's sum of the steps
	// taken (as 4D's: checkpoint.Manifest.EpochLossSum), so with d > 1 the
	// resumed run reports replica 0's for that epoch; its accuracies and
	// every later epoch are the uninterrupted run's bit for bit.
	if len(got) != len(want)-1 || got[0].Epoch != 2 || *got[0].ValAcc != *want[1].ValAcc || *got[0].TestAcc != *want[1].TestAcc {
		t.Fatalf("SIGTERM at step 3: resumed epochs %d from %d, epoch 2 %+v; uninterrupted %+v", len(got), got[0].Epoch, got[0], want[1])
	}
	sameEpochs(t, "SIGTERM at step 3", got[1:], want, 3, 0)
}
