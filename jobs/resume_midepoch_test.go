package jobs

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/method"
	"scalegnn/permute"
)

// midEpochJobs are small Cora jobs of every training method, with several
// steps per epoch where the method has them, and data-parallel replicas
// (grid.d > 1) where it trains mini-batches: the runs a signal may stop
// part-way through an epoch.
func midEpochJobs() []struct {
	name string
	cfg  func(dir string) jobfile.Config
} {
	jobs := midEpochJobsOf(gcn.GCNLayer)
	// And every method again with GAT layers: attention dropout's draws
	// and the per-entry state must resume as exactly.
	for _, j := range midEpochJobsOf(gcn.GATLayer) {
		j.name = "gat " + j.name
		jobs = append(jobs, j)
	}
	return jobs
}

// midEpochJobsOf are midEpochJobs with GCN layers (SAGE in neighbor mode,
// its usual layer), or all with layer.
func midEpochJobsOf(layer gcn.Layer) []struct {
	name string
	cfg  func(dir string) jobfile.Config
} {
	base := func(dir string) jobfile.Config {
		cfg := jobfile.DefaultConfig()
		cfg.Train.Epochs, cfg.Train.EvalEvery, cfg.Train.Seed = 3, 1, 3
		cfg.Permute = jobfile.PermuteConfig{Scheme: permute.Single, Seed: 5}
		cfg.Output.Dir = dir
		if layer == gcn.GATLayer {
			cfg.Model.Layer, cfg.Model.Hidden, cfg.Model.Heads, cfg.Model.OutputHeads = gcn.GATLayer, 4, 2, 2
		}
		return cfg
	}
	return []struct {
		name string
		cfg  func(dir string) jobfile.Config
	}{
		{"3d fullgraph 2x1x2", func(dir string) jobfile.Config {
			c := base(dir)
			c.Grid = jobfile.GridConfig{X: 2, Y: 1, Z: 2, D: 1}
			return c
		}},
		{"4d minibatch d=2 1x2x1", func(dir string) jobfile.Config {
			c := base(dir)
			c.Train.Mode, c.Train.BatchSize, c.Train.Prefetch = gcn.MiniBatch, 700, true
			c.Grid = jobfile.GridConfig{X: 1, Y: 2, Z: 1, D: 2}
			return c
		}},
		{"neighbor d=3", func(dir string) jobfile.Config {
			c := base(dir)
			if layer != gcn.GATLayer {
				c.Model.Layer = gcn.SAGELayer
			}
			c.Train.Mode, c.Train.Fanouts, c.Train.BatchSize, c.Train.Prefetch = gcn.Neighbor, []int{10, 5}, 20, true
			c.Grid = jobfile.GridConfig{X: 1, Y: 1, Z: 1, D: 3}
			return c
		}},
		{"isolated d=2", func(dir string) jobfile.Config {
			c := base(dir)
			c.Train.Mode, c.Train.BatchSize = gcn.Isolated, 30
			c.Grid = jobfile.GridConfig{X: 1, Y: 1, Z: 1, D: 2}
			// A new partition every epoch (4 chunks, 2 workers): a
			// resumed run must start on its epoch's.
			c.Grappa.Chunks, c.Grappa.EpochsPerSuperEpoch = 4, 1
			return c
		}},
		{"isolated phases P=4 d=2", func(dir string) jobfile.Config {
			c := base(dir)
			c.Train.Mode, c.Train.BatchSize = gcn.Isolated, 30
			c.Grid = jobfile.GridConfig{X: 1, Y: 1, Z: 1, D: 2}
			// Two phases of 3 steps (2·140/4 = 70 training vertices a
			// partition, batches of 30): the stops land inside a
			// phase and at its boundary, and a new super-epoch every
			// 2 epochs.
			c.Grappa.Partitions, c.Grappa.EpochsPerSuperEpoch = 4, 2
			return c
		}},
		{"isolated out of core P=4 d=2", func(dir string) jobfile.Config {
			c := base(dir)
			c.Train.Mode = gcn.Isolated
			c.Grid = jobfile.GridConfig{X: 1, Y: 1, Z: 1, D: 2}
			// Two phases of one whole-partition step, five chunks read
			// as blocks: the stops land on a phase's boundary, and the
			// resumed run must read its phase's partition.
			c.Grappa.Partitions, c.Grappa.Chunks, c.Grappa.OutOfCore, c.Grappa.Correction = 4, 5, true, "batch"
			return c
		}},
		{"1.5d fullgraph 2x2", func(dir string) jobfile.Config {
			c := base(dir)
			c.Train.Algorithm = method.CAGNET
			c.Grid = jobfile.GridConfig{X: 4, Y: 1, Z: 1, D: 1, Replication: 2}
			return c
		}},
		{"1.5d minibatch d=2 3x1", func(dir string) jobfile.Config {
			c := base(dir)
			c.Train.Mode, c.Train.Algorithm, c.Train.BatchSize = gcn.MiniBatch, method.CAGNET, 900
			c.Grid = jobfile.GridConfig{X: 3, Y: 1, Z: 1, D: 2, Replication: 1}
			return c
		}},
	}
}

// TestResumeMidEpochExact: in every training method, a signal that stops
// a run after any step — the first of an epoch, one in its middle, its
// last — followed by a resume from the checkpoint it left gives the
// uninterrupted run's metrics bit for bit, the interrupted epoch's loss
// included. Each rank of a data-parallel run holds its own replica's
// partial loss of the interrupted epoch; the checkpoint must keep each.
func TestResumeMidEpochExact(t *testing.T) {
	for _, job := range midEpochJobs() {
		t.Run(job.name, func(t *testing.T) {
			tmp := t.TempDir()
			want, _ := runKeep(t, job.cfg(filepath.Join(tmp, "full")), "", 0)
			steps := want[0].Steps
			// The first, a middle and the last step of epoch 2.
			stops := []int{steps + steps/2 + 1}
			if !testing.Short() {
				stops = append(stops, steps+1, 2*steps)
			}
			seen := map[int]bool{}
			for _, at := range stops {
				if seen[at] {
					continue // one step per epoch: first = middle = last
				}
				seen[at] = true
				stopped := job.cfg(filepath.Join(tmp, fmt.Sprint("stopped-", at)))
				stopped.Checkpoint = jobfile.CheckpointConfig{Every: 100}
				_, err := runKeep(t, stopped, "", at)
				var ie *InterruptedError
				if !errors.As(err, &ie) || ie.Checkpoint == "" || ie.Step != at {
					t.Fatalf("stop at step %d: error %v; want an InterruptedError at step %d with a checkpoint", at, err, at)
				}
				got, _ := runKeep(t, job.cfg(filepath.Join(tmp, fmt.Sprint("resumed-", at))), ie.Checkpoint, 0)
				sameEpochs(t, fmt.Sprintf("%s, stopped after step %d of %d per epoch", job.name, at, steps), got, want, ie.Epoch, 0)
			}
		})
	}
}
