package jobs

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"scalegnn/checkpoint"
	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/permute"
	"scalegnn/prepared"
	"scalegnn/record"
)

// TestNeighborConfigErrors: each bad neighbor-mode job file is one line
// naming the key and what to set.
func TestNeighborConfigErrors(t *testing.T) {
	nb := "[train]\nmode = \"neighbor\"\n"
	for _, test := range []struct{ name, data, want string }{
		{"no batch", nb + "fanouts = [5, 5]\n", "needs train.batch_size"},
		{"fanouts length", nb + "batch_size = 8\nfanouts = [5]\n", "train.fanouts = [5]: expected one fanout per layer (model.layers = 2)"},
		{"fanout zero", nb + "batch_size = 8\nfanouts = [5, 0]\n", "train.fanouts[1] = 0: expected at least 1"},
		{"ratio", nb + "batch_size = 8\nbatch_ratio = 0.5\nfanouts = [5, 5]\n", "train.batch_ratio and steps_per_epoch apply to"},
		{"grid", nb + "batch_size = 8\nfanouts = [5, 5]\n[grid]\nx = 2\n", "set grid.x = y = z = 1 and grid.d = the number of ranks"},
		{"norm", nb + "batch_size = 8\nfanouts = [5, 5]\n[model]\nnorm = \"rms\"\n", "plain stack of graph layers"},
		{"fanouts elsewhere", "[train]\nfanouts = [5, 5]\n", `train.fanouts applies to neighbor sampling`},
	} {
		_, err := jobfile.ParseConfig("job.toml", []byte(test.data))
		if err == nil {
			t.Errorf("%s: no error", test.name)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "job.toml: ") || !strings.Contains(msg, test.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q; expected one line containing %q", test.name, msg, test.want)
		}
	}
}

// TestNeighborJobRanksAlike: a neighbor-mode Cora job on 1 rank and on 4
// ranks with the same global batch (4 × 34 = 136 seeds) writes the same
// losses (1e-5 relative) and accuracies within one vertex's worth, and
// counts training bytes only with more than one rank.
func TestNeighborJobRanksAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("trains Cora twice")
	}
	base := func(d, batch int, dir string) jobfile.Config {
		cfg, err := jobfile.ParseConfig("job.toml", []byte(`
[dataset]
source = "cora"
normalize_features = true
[model]
layer = "sage"
[train]
mode = "neighbor"
fanouts = [25, 10]
batch_size = 1
prefetch = true
epochs = 6
eval_every = 3
seed = 3
[output]
dir = "`+dir+`"
`))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Grid.D, cfg.Train.BatchSize = d, batch
		return *cfg
	}
	tmp := t.TempDir()
	_, one := trainLocal(t, base(1, 136, filepath.Join(tmp, "one")))
	res, four := trainLocal(t, base(4, 34, filepath.Join(tmp, "four")))
	if res.Mode != "neighbor" || res.StepsPerEpoch != 2 {
		t.Errorf("summary: mode %q, %d steps per epoch; expected neighbor, 2", res.Mode, res.StepsPerEpoch)
	}
	for e := range one {
		a, b := one[e], four[e]
		if math.Abs(a.Loss-b.Loss) > 1e-5*math.Abs(a.Loss) {
			t.Errorf("epoch %d: loss %.9g on 1 rank, %.9g on 4", a.Epoch, a.Loss, b.Loss)
		}
		if a.TestAcc != nil && (b.TestAcc == nil || math.Abs(*a.TestAcc-*b.TestAcc) > 1.5e-3) {
			t.Errorf("epoch %d: test accuracy %v on 1 rank, %v on 4", a.Epoch, *a.TestAcc, b.TestAcc)
		}
		if a.DPBytes != 0 || b.DPBytes == 0 || (b.TestAcc != nil && b.EvalBytes == 0) {
			t.Errorf("epoch %d: training bytes %d on 1 rank, %d on 4; evaluation bytes %d", a.Epoch, a.DPBytes, b.DPBytes, b.EvalBytes)
		}
	}
}

// TestNeighborPreparedTrainsLikeInMemory: a neighbor-mode job trains
// identically (every epoch's loss, the final accuracies, bit for bit)
// from a prepared dataset as from the graph in memory, with block counts
// the rank count does not divide, with and without a permutation.
func TestNeighborPreparedTrainsLikeInMemory(t *testing.T) {
	for _, c := range []struct {
		scheme        permute.Scheme
		ranks, blocks int
		layer         gcn.Layer
	}{
		{permute.None, 1, 2, gcn.SAGELayer},
		{permute.None, 3, 2, gcn.GCNLayer},
		{permute.Single, 4, 3, gcn.SAGELayer},
	} {
		t.Run(fmt.Sprintf("%s-%d-ranks-%d-blocks-%v", c.scheme, c.ranks, c.blocks, c.layer), func(t *testing.T) {
			tmp := t.TempDir()
			cfg := jobfile.DefaultConfig()
			cfg.Model.Layer = c.layer
			cfg.Train.Mode, cfg.Train.Fanouts, cfg.Train.BatchSize, cfg.Train.Prefetch = gcn.Neighbor, []int{10, 5}, 24, true
			cfg.Train.Epochs, cfg.Train.EvalEvery = 3, 1
			cfg.Grid = jobfile.GridConfig{X: 1, Y: 1, Z: 1, D: c.ranks}
			cfg.Permute = jobfile.PermuteConfig{Scheme: c.scheme, Seed: 5}
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
			if got.FinalLoss != want.FinalLoss || got.Final != want.Final || len(gotM) != len(wantM) {
				t.Fatalf("prepared: loss %v, accuracy %+v; in memory: loss %v, accuracy %+v", got.FinalLoss, got.Final, want.FinalLoss, want.Final)
			}
			for e := range wantM {
				if wantM[e].Loss != gotM[e].Loss || wantM[e].DPBytes != gotM[e].DPBytes {
					t.Fatalf("epoch %d: loss %v and %d bytes from the prepared dataset, %v and %d in memory",
						e+1, gotM[e].Loss, gotM[e].DPBytes, wantM[e].Loss, wantM[e].DPBytes)
				}
			}
		})
	}
}

// TestNeighborResumeExact: a neighbor-mode job on 3 ranks (dropout on,
// Adam) that writes a checkpoint after epoch 2 of 5 and is resumed from
// it trains epochs 3 to 5 exactly as the run that never stopped: the same
// losses and accuracies bit for bit, the same bytes. It needs the
// weights, both Adam moments and the step count restored, and the
// sampling restarted at the checkpoint's step.
func TestNeighborResumeExact(t *testing.T) {
	tmp := t.TempDir()
	cfg := jobfile.DefaultConfig()
	cfg.Model.Layer = gcn.SAGELayer
	cfg.Train.Mode, cfg.Train.Fanouts, cfg.Train.BatchSize, cfg.Train.Prefetch = gcn.Neighbor, []int{10, 5}, 20, true
	cfg.Train.Epochs, cfg.Train.EvalEvery = 5, 1
	cfg.Grid = jobfile.GridConfig{X: 1, Y: 1, Z: 1, D: 3}
	cfg.Checkpoint = jobfile.CheckpointConfig{Every: 2, Keep: 1}
	cfg.Output.Dir = filepath.Join(tmp, "run")
	_, want := trainLocal(t, cfg)
	ckpt, _, err := checkpoint.Latest(cfg.CheckpointDir())
	if err != nil {
		t.Fatal(err)
	}
	man, err := checkpoint.ReadManifest(ckpt)
	if err != nil || man.Epoch != 4 {
		t.Fatalf("latest checkpoint %s: epoch %v, %v; expected epoch 4 (every 2, keep 1)", ckpt, man, err)
	}
	// Resume from epoch 2's: write it again from a run of 2 epochs.
	short := cfg
	short.Train.Epochs, short.Checkpoint.Every = 3, 2
	short.Output.Dir, short.Checkpoint.Dir = filepath.Join(tmp, "short"), filepath.Join(tmp, "ckpt2")
	trainLocal(t, short)
	if ckpt, _, err = checkpoint.Latest(short.Checkpoint.Dir); err != nil {
		t.Fatal(err)
	}
	resumed := cfg
	resumed.Output.Dir, resumed.Checkpoint = filepath.Join(tmp, "resumed"), jobfile.CheckpointConfig{}
	for r, err := range collectives.RunLocal(3, func(w collectives.Comm) error {
		c := resumed
		j, err := Setup(&c, w, device.NewNative(1), zap.NewNop())
		if err != nil {
			return err
		}
		if _, err := j.LoadCheckpoint(ckpt); err != nil {
			return err
		}
		if err := j.OpenOutput(OutputOptions{Resume: true}); err != nil {
			return err
		}
		_, err = j.Train()
		return err
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	got, err := record.ReadMetrics(resumed.MetricsPath())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Epoch != 3 {
		t.Fatalf("resumed run wrote %d epochs starting at %d; expected epochs 3 to 5", len(got), got[0].Epoch)
	}
	for _, g := range got {
		w := want[g.Epoch-1]
		if g.Loss != w.Loss || *g.TestAcc != *w.TestAcc || *g.ValAcc != *w.ValAcc || g.DPBytes != w.DPBytes {
			t.Errorf("epoch %d: resumed loss %v, accuracy %v/%v, %d bytes; uninterrupted %v, %v/%v, %d bytes",
				g.Epoch, g.Loss, *g.ValAcc, *g.TestAcc, g.DPBytes, w.Loss, *w.ValAcc, *w.TestAcc, w.DPBytes)
		}
	}
}
