package jobs

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grappa"
	"scalegnn/jobfile"
)

// TestIsolatedEvalMatchesWorker: the distributed evaluation (the workers
// as one 3D grid) gives the accuracies a worker's own model gives on the
// whole graph, after training, on the grid the model's rule picks and on
// set grids, non-power-of-two ones included; it is a 3D grid of all the
// ranks, not the workers' 1×1×1 grids.
func TestIsolatedEvalMatchesWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("trains Cora")
	}
	tmp := t.TempDir()
	for _, tc := range []struct {
		workers int
		grid    string // grappa.eval_grid; "" lets the model choose
		layers  int
	}{
		{4, "", 2},
		{6, "[3, 2, 1]", 3},
		{6, "[1, 2, 3]", 2},
		{3, "[1, 1, 3]", 2},
	} {
		name := fmt.Sprintf("%d-workers-%s", tc.workers, tc.grid)
		extra := fmt.Sprintf("mode = \"isolated\"\n[model]\nlayers = %d\n[grid]\nd = %d\n[grappa]\ncorrection = \"shrinkage\"\n", tc.layers, tc.workers)
		if tc.grid != "" {
			extra += "eval_grid = " + tc.grid + "\n"
		}
		cfg := isolatedConfig(t, extra, filepath.Join(tmp, fmt.Sprint(len(name), tc.workers, tc.layers)))
		cfg.Train.Epochs = 2
		own := make([]gcn.Accuracy, tc.workers)
		dist := make([]gcn.Accuracy, tc.workers)
		for r, err := range collectives.RunLocal(tc.workers, func(w collectives.Comm) error {
			c := cfg
			j, err := Setup(&c, w, device.NewNative(1), zap.NewNop())
			if err != nil {
				return err
			}
			if _, err := j.Train(); err != nil {
				return err
			}
			iso := j.method.(*isolated)
			e := iso.iso.eval
			if e == nil || e.g.D != 1 || e.g.X*e.g.Y*e.g.Z != tc.workers {
				return fmt.Errorf("evaluation grid %+v; want a 3D grid of all %d ranks", e, tc.workers)
			}
			if tc.grid != "" && fmt.Sprintf("[%d, %d, %d]", e.g.X, e.g.Y, e.g.Z) != tc.grid {
				return fmt.Errorf("evaluation grid %dx%dx%d; eval_grid = %s", e.g.X, e.g.Y, e.g.Z, tc.grid)
			}
			if dist[w.Rank()], _, err = iso.iso.evaluate(iso.m); err != nil {
				return err
			}
			own[w.Rank()], err = iso.m.Evaluate()
			return err
		}) {
			if err != nil {
				t.Fatalf("%s: rank %d: %v", name, r, err)
			}
		}
		// The accuracies are counts and must agree exactly; the
		// validation loss is a float32 sum whose order depends on the
		// evaluation grid, equal to 1e-8 relative (measured 2e-10).
		same := func(a, b gcn.Accuracy) bool {
			return a.Train == b.Train && a.Val == b.Val && a.Test == b.Test &&
				math.Abs(a.ValLoss-b.ValLoss) <= 1e-8*math.Abs(b.ValLoss)
		}
		for r := range tc.workers {
			if !same(dist[r], own[0]) || own[r] != own[0] {
				t.Errorf("%s rank %d: distributed %+v, the worker's own %+v (rank 0's own %+v)", name, r, dist[r], own[r], own[0])
			}
		}
	}
}

// wantChunkBytes is what the chunk loads of an isolated job read in each
// of its epochs, summed over the workers, counted here from the schedule
// alone: the first partition's two chunks in epoch 1, then at each
// super-epoch boundary (every epoch without early switches) the chunks
// the next partition holds that the current one does not.
func wantChunkBytes(t *testing.T, cfg jobfile.Config) []int64 {
	t.Helper()
	graph, err := jobfile.LoadGraph(cfg.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	adj := dataset.NormalizeGCN(graph.Adj) // no permutation: rows are vertex ids
	m := cfg.Grid.D
	p, c := cfg.Grappa.PartitionCount(m), cfg.Grappa.ChunkCount(m)
	ch, err := grappa.SplitRandom(graph.N, c, uint64(cfg.Train.Seed))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := grappa.NewSchedule(p, c)
	if err != nil {
		t.Fatal(err)
	}
	ph, err := grappa.NewPhases(p, m)
	if err != nil {
		t.Fatal(err)
	}
	eps := max(1, cfg.Grappa.EpochsPerSuperEpoch)
	out := make([]int64, cfg.Train.Epochs)
	for r := range m {
		// A partition reads the chunks the rank's previous one did not
		// hold; the load after an epoch's end (the next epoch's first
		// partition) counts in the epoch that ends.
		var held []int
		read := func(e, s, i int) {
			b, x := sc.Partition(ph.Partition(r, i), s)
			now := []int{b}
			if x != b {
				now = append(now, x)
			}
			for _, k := range now {
				if !slices.Contains(held, k) {
					out[e] += grappa.ChunkBytes(adj, ch, k, graph.F)
				}
			}
			held = now
		}
		read(0, 0, 0)
		for e := range cfg.Train.Epochs {
			s, next := e/eps, (e+1)/eps
			for i := 1; i < ph.Count(); i++ {
				read(e, s, i)
			}
			if ph.Count() > 1 || next != s {
				read(e, next, 0)
			}
		}
	}
	return out
}
