package jobs

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/permute"
	"scalegnn/prepared"
	"scalegnn/record"
)

// TestIsolatedBatches: with train.batch_size = B > 0 a step trains B of
// the partition's training vertices on their k-hop closure inside the
// partition. On one worker with B = all 140 of Cora's training vertices
// the closure gives them their exact outputs, so training equals
// full-graph training step for step; with four workers and B = 16 an
// epoch is ⌈(2·140/4)/16⌉ = 5 steps, each one gradient all-reduce.
func TestIsolatedBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("trains Cora three times")
	}
	tmp := t.TempDir()
	_, full := trainLocal(t, isolatedConfig(t, `mode = "fullgraph"`, filepath.Join(tmp, "full")))
	_, one := trainLocal(t, isolatedConfig(t, "mode = \"isolated\"\nbatch_size = 140\n[grappa]\ncorrection = \"shrinkage\"", filepath.Join(tmp, "one")))
	for e := range full {
		if a, b := full[e].Loss, one[e].Loss; math.Abs(a-b) > 1e-5*math.Abs(a) {
			t.Errorf("epoch %d: loss %.9g full-graph, %.9g isolated on one worker with the whole training set as its batch", e+1, a, b)
		}
	}
	cfg := isolatedConfig(t, "mode = \"isolated\"\nbatch_size = 16\n[grappa]\ncorrection = \"batch\"", filepath.Join(tmp, "four"))
	cfg.Grid.D = 4
	_, four := trainLocal(t, cfg)
	params := int64(1433*16 + 16*7) // Cora's two GCN weights, hidden 16
	for _, m := range four {
		if m.Steps != 5 || m.DPBytes != 4*5*4*params || m.PMMBytes != 0 || m.Comm3DBytes != 0 {
			t.Errorf("epoch %d: %d steps, dp %d, pmm %d, 3d %d bytes; want 5 steps and only their all-reduces, %d bytes over 4 ranks",
				m.Epoch, m.Steps, m.DPBytes, m.PMMBytes, m.Comm3DBytes, 4*5*4*params)
		}
		if math.IsNaN(m.Loss) || m.Loss <= 0 {
			t.Errorf("epoch %d: loss %v", m.Epoch, m.Loss)
		}
	}
}

// TestIsolatedPrepared: isolated training reads a prepared dataset (each
// rank's 1×1×1 shards are the whole graph) and builds the same chunks and
// partitions from it as from the graph in memory, so four workers train
// identically from both.
func TestIsolatedPrepared(t *testing.T) {
	if testing.Short() {
		t.Skip("prepares and trains Cora")
	}
	tmp := t.TempDir()
	for _, part := range []string{"induced", "halo"} {
		cfg := isolatedConfig(t, "mode = \"isolated\"\n[grappa]\ncorrection = \"shrinkage\"\npartition = \""+part+"\"", filepath.Join(tmp, part+"-mem"))
		cfg.Grid.D, cfg.Permute = 4, jobfile.PermuteConfig{Scheme: permute.Single, Seed: 5}
		want, wantM := trainLocal(t, cfg)
		g, err := dataset.Builtin("cora")
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(tmp, part+"-cora-prepared")
		if _, err := prepared.Prepare(&prepared.GraphInput{G: g}, dir, prepared.Options{Blocks: 3, Scheme: permute.Single, Seed: 5}); err != nil {
			t.Fatal(err)
		}
		cfg.Dataset.Source, cfg.Dataset.Path = jobfile.SourcePrepared, dir
		cfg.Output.Dir = filepath.Join(tmp, part+"-prepared")
		got, gotM := trainLocal(t, cfg)
		if got.FinalLoss != want.FinalLoss || got.Final != want.Final {
			t.Fatalf("%s: prepared: loss %v, accuracy %+v; in memory: loss %v, accuracy %+v", part, got.FinalLoss, got.Final, want.FinalLoss, want.Final)
		}
		for e := range wantM {
			if wantM[e].Loss != gotM[e].Loss || wantM[e].DPBytes != gotM[e].DPBytes {
				t.Fatalf("%s epoch %d: loss %v, dp bytes %d from the prepared dataset; %v, %d in memory", part, e+1, gotM[e].Loss, gotM[e].DPBytes, wantM[e].Loss, wantM[e].DPBytes)
			}
		}
	}
}

// TestIsolatedGraph: the structure and training mask isolated mode takes
// from a permuted Source are the graph's own, in vertex ids: Â's pattern
// is A's plus the diagonal.
func TestIsolatedGraph(t *testing.T) {
	g, err := dataset.Builtin("cora")
	if err != nil {
		t.Fatal(err)
	}
	perms := permute.New(g.N, permute.Double, 3)
	src, err := gcn.NewMemorySource(&gcn.Graph{Adj: dataset.NormalizeGCN(g.Adj), Features: g.Features, Labels: g.Labels,
		Train: g.Train, Val: g.Val, Test: g.Test, Classes: g.Classes}, gcn.NewOrders(g.N, perms.P1, perms.P2))
	if err != nil {
		t.Fatal(err)
	}
	adj, train, err := isolatedGraph(src)
	if err != nil {
		t.Fatal(err)
	}
	for v := range g.N {
		want := append([]int32{int32(v)}, g.Adj.ColIdx[g.Adj.RowPtr[v]:g.Adj.RowPtr[v+1]]...)
		slices.Sort(want)
		want = slices.Compact(want)
		if got := adj.ColIdx[adj.RowPtr[v]:adj.RowPtr[v+1]]; !slices.Equal(got, want) || train[v] != g.Train[v] {
			t.Fatalf("vertex %d: row %v train %v, want %v and %v", v, got, train[v], want, g.Train[v])
		}
	}
}

// TestIsolatedHaloFactorsOne: a halo partition holds every neighbor of its
// training vertices, so ĉ = 1 and every correction's factor is 1: the
// three corrections train identically (the accuracy table measures halo
// partitions with correction none only for this reason). Induced
// partitions miss neighbors, and there shrinkage's factor changes training.
func TestIsolatedHaloFactorsOne(t *testing.T) {
	if testing.Short() {
		t.Skip("trains Cora six times")
	}
	tmp := t.TempDir()
	for _, part := range []string{"halo", "induced"} {
		var losses [][]record.EpochMetrics
		for _, corr := range []string{"none", "batch", "shrinkage"} {
			cfg := isolatedConfig(t, "mode = \"isolated\"\n[grappa]\npartition = \""+part+"\"\ncorrection = \""+corr+"\"", filepath.Join(tmp, part+corr))
			cfg.Grid.D, cfg.Train.Epochs = 4, 3
			_, ms := trainLocal(t, cfg)
			losses = append(losses, ms)
		}
		differ := false
		for c := 1; c < 3; c++ {
			for e := range losses[0] {
				if losses[c][e].Loss != losses[0][e].Loss {
					differ = true
				}
			}
		}
		if differ != (part == "induced") {
			t.Errorf("%s partitions: corrections change training: %v, want %v", part, differ, part == "induced")
		}
	}
}
