package prepared

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// memorySource is what jobs.Setup builds from a graph in memory.
func memorySource(t *testing.T, g *dataset.Graph, scheme permute.Scheme, seed int64, normalize bool) gcn.Source {
	t.Helper()
	if normalize {
		g = cloneGraph(g)
		dataset.RowNormalize(g)
	}
	p := permute.New(g.N, scheme, uint64(seed))
	src, err := gcn.NewMemorySource(&gcn.Graph{
		Adj: dataset.NormalizeGCN(g.Adj), Features: g.Features, Labels: g.Labels, Train: g.Train, Val: g.Val, Test: g.Test,
	}, gcn.NewOrders(g.N, p.P1, p.P2))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func cloneGraph(g *dataset.Graph) *dataset.Graph {
	c := *g
	c.Features = append([]float32(nil), g.Features...)
	return &c
}

// shardsOf builds every rank's shards of a grid from src (goroutines as
// ranks).
func shardsOf(t *testing.T, shape grid.Shape, cfg gcn.Config, mk func() gcn.Source) []*gcn.Shards {
	t.Helper()
	n := shape.Ranks()
	sh := make([]*gcn.Shards, n)
	for r, err := range collectives.RunLocal(n, func(w collectives.Comm) error {
		g, err := grid.New(w, shape)
		if err != nil {
			return err
		}
		s, err := gcn.NewShards(g, cfg, mk())
		sh[w.Rank()] = s
		return err
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return sh
}

// compareShards requires identical shards: every adjacency shard and its
// transpose bit for bit (a prepared dataset fills them through
// gcn.SourceInto, the memory source through AdjBlock), features, labels and
// masks.
func compareShards(t *testing.T, want, got []*gcn.Shards, layers int) {
	t.Helper()
	for r := range want {
		w, g := want[r], got[r]
		for _, key := range grid.ShardsOf(layers, true) {
			wa, wat := w.Adj(key)
			ga, gat := g.Adj(key)
			if (wa == nil) != (ga == nil) || (wat == nil) != (gat == nil) ||
				(wa != nil && !sameBlock(wa, ga)) || (wat != nil && !sameBlock(wat, gat)) {
				t.Fatalf("rank %d: adjacency shard %v (or its transpose) differs", r, key)
			}
		}
		if !reflect.DeepEqual(w.Orders.Order, g.Orders.Order) {
			t.Fatalf("rank %d: orders differ", r)
		}
		if !reflect.DeepEqual(w.X, g.X) || !reflect.DeepEqual(w.Labels, g.Labels) || !reflect.DeepEqual(w.Train, g.Train) ||
			!reflect.DeepEqual(w.Val, g.Val) || !reflect.DeepEqual(w.Test, g.Test) || w.N != g.N {
			t.Fatalf("rank %d: features, labels or masks differ", r)
		}
	}
}

func smallGraphs(t *testing.T) map[string]*dataset.Graph {
	t.Helper()
	cora, err := dataset.Builtin("cora")
	if err != nil {
		t.Fatal(err)
	}
	sc := dataset.DefaultSBMConfig(301)
	sc.Features = 5
	sbm, err := dataset.SBM(sc)
	if err != nil {
		t.Fatal(err)
	}
	rc := dataset.DefaultRMATConfig(9)
	rc.Features = 3
	rmat, err := dataset.RMAT(rc)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*dataset.Graph{"cora": cora, "sbm": sbm, "rmat": rmat}
}

// TestRoundTrip prepares graphs with every permutation scheme and block
// counts that divide no grid size, and checks that every rank of several
// grids gets exactly the shards it gets from the graph in memory.
func TestRoundTrip(t *testing.T) {
	graphs := smallGraphs(t)
	shapes := []grid.Shape{{D: 1, X: 1, Y: 1, Z: 1}, {D: 1, X: 2, Y: 2, Z: 2}, {D: 1, X: 1, Y: 2, Z: 3}}
	cases := []struct {
		graph  string
		scheme permute.Scheme
		blocks int
		cfg    gcn.Config
		norm   bool
	}{
		{"sbm", permute.None, 5, gcn.Config{Hidden: 4, Layers: 2}, false},
		{"sbm", permute.Single, 7, gcn.Config{Hidden: 4, Layers: 3}, true},
		{"sbm", permute.Double, 5, gcn.Config{Hidden: 4, Layers: 3, InputProjection: true, OutputHead: true}, false},
		{"rmat", permute.Double, 4, gcn.Config{Hidden: 4, Layers: 2}, true},
		{"rmat", permute.None, 1, gcn.Config{Hidden: 4, Layers: 4, InputProjection: true}, false},
		{"cora", permute.Double, 3, gcn.Config{Hidden: 16, Layers: 2}, true},
	}
	for _, c := range cases {
		g := graphs[c.graph]
		name := fmt.Sprintf("%s/%v/S%d/L%d", c.graph, c.scheme, c.blocks, c.cfg.Layers)
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			if _, err := Prepare(&GraphInput{G: g, Format: "test"}, dir, Options{Blocks: c.blocks, Scheme: c.scheme, Seed: 7}); err != nil {
				t.Fatal(err)
			}
			cfg := c.cfg
			cfg.Features, cfg.Classes = g.F, g.Classes
			for _, shape := range shapes {
				want := shardsOf(t, shape, cfg, func() gcn.Source { return memorySource(t, g, c.scheme, 7, c.norm) })
				got := shardsOf(t, shape, cfg, func() gcn.Source {
					d, err := Open(dir, LoadOptions{NormalizeFeatures: c.norm})
					if err != nil {
						t.Error(err)
					}
					return d
				})
				compareShards(t, want, got, cfg.Layers)
				checkBlocks(t, memorySource(t, g, c.scheme, 7, c.norm), dir, c.norm, c.scheme)
			}
		})
	}
}

// sameBlock compares two recorded blocks exactly (values bit for bit),
// treating a nil slice and an empty one alike.
func sameBlock(a, b any) bool {
	x, okx := a.(*spmm.CSR)
	y, oky := b.(*spmm.CSR)
	if okx && oky {
		return x.Rows == y.Rows && x.Cols == y.Cols && slices.Equal(x.RowPtr, y.RowPtr) && slices.Equal(x.ColIdx, y.ColIdx) &&
			slices.EqualFunc(x.Val, y.Val, func(p, q float32) bool { return math.Float32bits(p) == math.Float32bits(q) })
	}
	return reflect.DeepEqual(a, b)
}

// checkBlocks compares Dataset.AdjBlock and FeatureBlock (the allocating
// forms) with the memory source on ranges that cut stored blocks at random
// places, in both orders.
func checkBlocks(t *testing.T, mem gcn.Source, dir string, norm bool, scheme permute.Scheme) {
	t.Helper()
	d, err := Open(dir, LoadOptions{NormalizeFeatures: norm})
	if err != nil {
		t.Fatal(err)
	}
	n, f := d.Meta.Nodes, d.Meta.Features
	rng := rand.New(rand.NewPCG(3, uint64(n)))
	span := func(n int) (int, int) {
		a, b := rng.IntN(n+1), rng.IntN(n+1)
		return min(a, b), max(a, b)
	}
	for range 8 {
		r0, r1 := span(n)
		c0, c1 := span(n)
		for _, o := range [][2]int{{0, 1}, {1, 0}} {
			if scheme != permute.Double {
				o = [2]int{0, 0}
			}
			want, _ := mem.AdjBlock(o[0], r0, r1, o[1], c0, c1)
			got, err := d.AdjBlock(o[0], r0, r1, o[1], c0, c1)
			if err != nil || !sameBlock(want, got) {
				t.Fatalf("AdjBlock(%d, %d, %d, %d, %d, %d): %v, differs from memory", o[0], r0, r1, o[1], c0, c1, err)
			}
		}
		fc0, fc1 := span(f)
		want, _ := mem.FeatureBlock(1, r0, r1, fc0, fc1)
		got, err := d.FeatureBlock(1, r0, r1, fc0, fc1)
		if err != nil || !sameBlock(want, got) {
			t.Fatalf("FeatureBlock(1, %d, %d, %d, %d): %v, differs from memory", r0, r1, fc0, fc1, err)
		}
	}
}

// TestAdjBlockThreads: AdjBlock copies a strip's rows on several threads
// (a share of rows each, 4096 rows at least): on a graph large enough for
// three, strips of whole and of cut blocks, in both row orders, equal the
// memory source's bit for bit.
func TestAdjBlockThreads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	rc := dataset.DefaultRMATConfig(14)
	rc.Features = 2
	g, err := dataset.RMAT(rc)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := Prepare(&GraphInput{G: g, Format: "test"}, dir, Options{Blocks: 3, Scheme: permute.Single, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	mem := memorySource(t, g, permute.Single, 7, false)
	d, err := Open(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := d.Meta.Nodes
	for _, s := range [][4]int{{0, n, 0, n}, {0, n / 3, 0, n}, {100, n - 77, 0, n}, {13, n, 5000, n - 1}} {
		want, _ := mem.AdjBlock(0, s[0], s[1], 0, s[2], s[3])
		got, err := d.AdjBlock(0, s[0], s[1], 0, s[2], s[3])
		if err != nil || !sameBlock(want, got) {
			t.Fatalf("AdjBlock(0, %d, %d, 0, %d, %d): %v, differs from memory", s[0], s[1], s[2], s[3], err)
		}
	}
	checkBlocks(t, mem, dir, false, permute.Single)
}
