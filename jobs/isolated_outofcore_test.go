package jobs

import (
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/permute"
	"scalegnn/prepared"
)

// TestIsolatedOutOfCore: grappa.out_of_core, reading each partition's
// blocks from the source, trains exactly as the workers holding the whole
// graph do with the same chunks (grappa.split = "blocks"): the same loss
// every epoch and the same accuracies, bit for bit, from the graph in
// memory and from a prepared dataset with one block per chunk, for GCN,
// SAGE and GAT, one partition per rank and in phases.
func TestIsolatedOutOfCore(t *testing.T) {
	for _, tc := range []struct {
		ranks, partitions, chunks int
		layer                     gcn.Layer
		correction                string
	}{
		{2, 2, 2, gcn.GCNLayer, "shrinkage"},
		{1, 3, 4, gcn.GCNLayer, "batch"}, // three phases on one rank, the base rotating
		{2, 4, 5, gcn.SAGELayer, "batch"},
		{1, 2, 2, gcn.GATLayer, "none"},
	} {
		name := fmt.Sprintf("%s M=%d P=%d C=%d %s", tc.layer, tc.ranks, tc.partitions, tc.chunks, tc.correction)
		t.Run(name, func(t *testing.T) {
			if testing.Short() && tc.layer != gcn.GCNLayer {
				t.Skip("GCN's cases cover the reading")
			}
			tmp := t.TempDir()
			cfg := isolatedConfig(t, fmt.Sprintf("mode = \"isolated\"\n[grappa]\npartitions = %d\nchunks = %d\ncorrection = %q\nsplit = \"blocks\"",
				tc.partitions, tc.chunks, tc.correction), filepath.Join(tmp, "whole"))
			cfg.Grid.D, cfg.Permute = tc.ranks, jobfile.PermuteConfig{Scheme: permute.Single, Seed: 5}
			cfg.Model.Layer = tc.layer
			if tc.layer == gcn.GATLayer {
				cfg.Model.Hidden, cfg.Model.Heads, cfg.Model.OutputHeads = 4, 2, 1
			}
			want, wantM := trainLocal(t, cfg)

			dir := preparedCora(t, tmp, tc.chunks)
			for _, src := range []string{"memory", "prepared"} {
				c := cfg
				c.Grappa.OutOfCore = true
				c.Output.Dir = filepath.Join(tmp, "ooc-"+src)
				if src == "prepared" {
					c.Dataset.Source, c.Dataset.Path = jobfile.SourcePrepared, dir
				}
				got, gotM := trainLocal(t, c)
				if got.FinalLoss != want.FinalLoss || got.Final != want.Final {
					t.Fatalf("out of core from %s: loss %v, accuracy %+v; whole graph: loss %v, accuracy %+v", src, got.FinalLoss, got.Final, want.FinalLoss, want.Final)
				}
				for e := range wantM {
					if gotM[e].Loss != wantM[e].Loss || gotM[e].DPBytes != wantM[e].DPBytes {
						t.Fatalf("out of core from %s, epoch %d: loss %v, dp bytes %d; whole graph: %v, %d", src, e+1, gotM[e].Loss, gotM[e].DPBytes, wantM[e].Loss, wantM[e].DPBytes)
					}
					if gotM[e].ChunkBytes == 0 {
						t.Errorf("out of core from %s, epoch %d: no chunk bytes read", src, e+1)
					}
				}
			}
		})
	}
}

// preparedCora prepares Cora in tmp with blocks blocks and the single
// permutation the tests' jobs draw (seed 5): one block per chunk.
func preparedCora(t *testing.T, tmp string, blocks int) string {
	t.Helper()
	g, err := dataset.Builtin("cora")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "cora-prepared")
	if _, err := prepared.Prepare(&prepared.GraphInput{G: g}, dir, prepared.Options{Blocks: blocks, Scheme: permute.Single, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestIsolatedOutOfCoreConfig: what out-of-core reading cannot do is
// refused with the key to change.
func TestIsolatedOutOfCoreConfig(t *testing.T) {
	base := "[dataset]\nsource = \"cora\"\n[train]\nmode = \"isolated\"\n"
	for _, tc := range []struct{ extra, want string }{
		{"[grappa]\nsplit = \"stripes\"", `grappa.split = "stripes"`},
		{"[grappa]\nout_of_core = true\nsplit = \"random\"", `set grappa.split = "blocks"`},
		{"[grappa]\nout_of_core = true\npartition = \"halo\"", `grappa.partition = "induced"`},
		{"batch_size = 10\n[grappa]\nout_of_core = true", "train.batch_size = 10"},
		{"[grappa]\nout_of_core = true\ndeficit_epochs = 2", "grappa.deficit_epochs = 2"},
		{"[grappa]\nout_of_core = true\n[permute]\nscheme = \"double\"", `permute.scheme = "double"`},
	} {
		_, err := jobfile.ParseConfig("job.toml", []byte(base+tc.extra+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one naming %q", tc.extra, err, tc.want)
		}
	}
}

// TestIsolatedLayerwiseEvaluation: layer-wise evaluation (package infer)
// gives the accuracies of the evaluation grid (or, on one worker, of the
// worker's own model) exactly and its validation loss within 1e-5, every
// evaluated epoch, training untouched; with its activations in memory
// and in files, from memory and, out of core, from a prepared dataset.
func TestIsolatedLayerwiseEvaluation(t *testing.T) {
	for _, tc := range []struct {
		ranks, partitions, chunks int
		layer                     gcn.Layer
		files, outOfCore          bool
	}{
		{1, 1, 3, gcn.GCNLayer, false, false},
		{2, 2, 5, gcn.GCNLayer, true, false},
		{4, 4, 4, gcn.SAGELayer, false, true},
		{2, 4, 4, gcn.GATLayer, true, true},
	} {
		name := fmt.Sprintf("%s M=%d P=%d C=%d files %v out of core %v", tc.layer, tc.ranks, tc.partitions, tc.chunks, tc.files, tc.outOfCore)
		t.Run(name, func(t *testing.T) {
			if testing.Short() && tc.layer == gcn.GATLayer {
				t.Skip("GCN's and SAGE's cases cover the engine's use")
			}
			tmp := t.TempDir()
			cfg := isolatedConfig(t, fmt.Sprintf("mode = \"isolated\"\n[grappa]\npartitions = %d\nchunks = %d\nsplit = \"blocks\"\nevaluation = \"grid\"",
				tc.partitions, tc.chunks), filepath.Join(tmp, "grid"))
			cfg.Grid.D, cfg.Permute = tc.ranks, jobfile.PermuteConfig{Scheme: permute.Single, Seed: 5}
			cfg.Model.Layer = tc.layer
			if tc.layer == gcn.GATLayer {
				cfg.Model.Hidden, cfg.Model.Heads, cfg.Model.OutputHeads = 4, 2, 1
			}
			_, wantM := trainLocal(t, cfg)
			c := cfg
			c.Grappa.Evaluation, c.Grappa.EvalGrid, c.Output.Dir = "layerwise", nil, filepath.Join(tmp, "layerwise")
			if tc.files {
				c.Grappa.EvalDir = filepath.Join(tmp, "activations")
			}
			if tc.outOfCore {
				c.Dataset.Source, c.Dataset.Path, c.Grappa.OutOfCore = jobfile.SourcePrepared, preparedCora(t, tmp, tc.chunks), true
			}
			_, gotM := trainLocal(t, c)
			evaluated := 0
			for e, w := range wantM {
				g := gotM[e]
				if g.Loss != w.Loss {
					t.Fatalf("epoch %d: loss %v with layer-wise evaluation, %v with the grid's", e+1, g.Loss, w.Loss)
				}
				if w.ValAcc == nil {
					continue
				}
				evaluated++
				if g.ValAcc == nil || *g.TrainAcc != *w.TrainAcc || *g.ValAcc != *w.ValAcc || *g.TestAcc != *w.TestAcc ||
					math.Abs(*g.ValLoss-*w.ValLoss) > 1e-5*math.Max(1, *w.ValLoss) {
					t.Fatalf("epoch %d: layer-wise accuracies %v/%v/%v, validation loss %v; the grid's %v/%v/%v, %v",
						e+1, *g.TrainAcc, *g.ValAcc, *g.TestAcc, *g.ValLoss, *w.TrainAcc, *w.ValAcc, *w.TestAcc, *w.ValLoss)
				}
			}
			if evaluated == 0 {
				t.Fatal("no epoch was evaluated")
			}
			if tc.files {
				if left, _ := filepath.Glob(filepath.Join(c.Grappa.EvalDir, "*")); len(left) != 0 {
					t.Errorf("the evaluation left %d files in its directory: %v", len(left), left)
				}
			}
		})
	}
}

// TestStripBudget: layer-wise evaluation keeps no strips without a soft
// memory limit, and a quarter of what a limit leaves above the heap.
func TestStripBudget(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	debug.SetMemoryLimit(math.MaxInt64)
	if b := stripBudget(); b != 0 {
		t.Errorf("no limit: a budget of %d bytes", b)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	debug.SetMemoryLimit(int64(ms.HeapAlloc) + 4<<30)
	if b := stripBudget(); b < 900<<20 || b > 1<<30 {
		t.Errorf("4 GiB above the heap: a budget of %d bytes, want about 1 GiB", b)
	}
}
