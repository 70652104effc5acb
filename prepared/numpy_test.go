package prepared

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// fixture is testdata/numpy: an edge list and arrays written as numpy.save
// writes them (float64 features, int64 labels, a bool mask, int64 and int32
// id lists), not by this project's writer.
func fixture() EdgeListFiles {
	d := filepath.Join("testdata", "numpy")
	return EdgeListFiles{
		Edges: filepath.Join(d, "edges.txt"), Features: filepath.Join(d, "features.npy"), Labels: filepath.Join(d, "labels.npy"),
		Train: filepath.Join(d, "train.npy"), Val: filepath.Join(d, "val.npy"), Test: filepath.Join(d, "test.npy"),
	}
}

// fixtureGraph is the fixture as a dataset.Graph, written out by hand.
func fixtureGraph() *dataset.Graph {
	const n, f = 12, 3
	g := &dataset.Graph{Name: "edges", N: n, F: f, Classes: 3}
	var us, vs []int32
	for _, e := range [][2]int32{{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6}, {6, 7}, {7, 4}, {8, 9}, {9, 10}, {10, 8}, {0, 4}, {4, 8}} {
		us, vs = append(us, e[0], e[1]), append(vs, e[1], e[0])
	}
	g.Adj = spmm.FromCOO(n, n, us, vs, nil)
	for i := range n {
		for j := range f {
			g.Features = append(g.Features, float32(i)+float32(j)/4)
		}
	}
	g.Labels = []int32{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, -1}
	g.Train, g.Val, g.Test = make([]bool, n), make([]bool, n), make([]bool, n)
	for _, v := range []int{0, 1, 2, 3} {
		g.Train[v] = true
	}
	for _, v := range []int{4, 5, 6} {
		g.Val[v] = true
	}
	for _, v := range []int{7, 8, 9, 10} {
		g.Test[v] = true
	}
	return g
}

// TestNumpyEdgeList prepares the numpy fixture and checks the metadata,
// known values, and every rank's shards against the graph written by hand.
func TestNumpyEdgeList(t *testing.T) {
	want := fixtureGraph()
	if err := want.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, scheme := range []permute.Scheme{permute.None, permute.Double} {
		in, err := NewEdgeListInput(fixture())
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "ds")
		m, err := Prepare(in, dir, Options{Blocks: 5, Scheme: scheme, Seed: 3, Symmetrize: true})
		if err != nil {
			t.Fatal(err)
		}
		if m.Nodes != 12 || m.Features != 3 || m.Classes != 3 || m.Edges != 26 || m.NNZ != 38 ||
			m.Train != 4 || m.Val != 3 || m.Test != 4 || m.Weighted || !m.Symmetric || m.Source.Format != "edgelist" {
			t.Fatalf("metadata %+v", m)
		}
		d, err := Open(dir, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p2 := d.Orders().Order[1]
		x, err := d.FeatureBlock(1, 0, 12, 0, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range p2 {
			if !slices.Equal(x[3*i:3*i+3], []float32{float32(v), float32(v) + 0.25, float32(v) + 0.5}) {
				t.Fatalf("features of position %d (vertex %d): %v", i, v, x[3*i:3*i+3])
			}
		}
		lab, tr, _, te, err := d.Labels(1, 0, 12)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range p2 {
			if lab[i] != want.Labels[v] || tr[i] != (v < 4) || te[i] != (v >= 7 && v <= 10) {
				t.Fatalf("position %d (vertex %d): label %d, train %v, test %v", i, v, lab[i], tr[i], te[i])
			}
		}
		cfg := gcn.Config{Features: 3, Classes: 3, Hidden: 2, Layers: 2}
		for _, shape := range []grid.Shape{{D: 1, X: 1, Y: 1, Z: 1}, {D: 1, X: 2, Y: 2, Z: 2}, {D: 1, X: 1, Y: 2, Z: 3}} {
			w := shardsOf(t, shape, cfg, func() gcn.Source { return memorySource(t, want, scheme, 3, false) })
			g := shardsOf(t, shape, cfg, func() gcn.Source { return d })
			compareShards(t, w, g, cfg.Layers)
		}
	}
}

// TestDirectedWeighted prepares a weighted edge list with and without
// symmetrising: a directed graph stores both orientations with double
// permutation, and every shard matches the in-memory normalisation of the
// same matrix (duplicates keep their largest weight, self loops dropped).
func TestDirectedWeighted(t *testing.T) {
	const n = 9
	tmp := t.TempDir()
	var text string
	type edge struct {
		u, v int32
		w    float32
	}
	var edges []edge
	for k := range 40 {
		e := edge{int32(k * 7 % n), int32(k * 5 % (n - 1)), float32(k%5) + 0.3}
		edges = append(edges, e)
		text += fmt.Sprintf("%d %d %g\n", e.u, e.v, e.w)
	}
	files := fixture()
	files.Edges = filepath.Join(tmp, "w.txt")
	if err := os.WriteFile(files.Edges, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := fixtureGraph()
	for _, sym := range []bool{false, true} {
		// Reference: the merged matrix, normalised in memory.
		best := map[[2]int32]float32{}
		for _, e := range edges {
			if e.u == e.v {
				continue
			}
			keys := [][2]int32{{e.u, e.v}}
			if sym {
				keys = append(keys, [2]int32{e.v, e.u})
			}
			for _, k := range keys {
				if w, ok := best[k]; !ok || e.w > w {
					best[k] = e.w
				}
			}
		}
		var us, vs []int32
		var ws []float32
		for k, w := range best {
			us, vs, ws = append(us, k[0]), append(vs, k[1]), append(ws, w)
		}
		g := *ref
		g.N = 12
		g.Adj = spmm.FromCOO(12, 12, us, vs, ws)
		for _, scheme := range []permute.Scheme{permute.Single, permute.Double} {
			in, err := NewEdgeListInput(files)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(tmp, fmt.Sprintf("ds-%v-%v", sym, scheme))
			m, err := Prepare(in, dir, Options{Blocks: 4, Scheme: scheme, Seed: 11, Symmetrize: sym})
			if err != nil {
				t.Fatal(err)
			}
			if !m.Weighted || m.Symmetric != sym || m.Orientations != orientations(scheme, sym, true) {
				t.Fatalf("metadata %+v", m)
			}
			d, err := Open(dir, LoadOptions{NormalizeFeatures: true})
			if err != nil {
				t.Fatal(err)
			}
			cfg := gcn.Config{Features: 3, Classes: 3, Hidden: 2, Layers: 3}
			for _, shape := range []grid.Shape{{D: 1, X: 1, Y: 1, Z: 1}, {D: 1, X: 1, Y: 2, Z: 3}} {
				w := shardsOf(t, shape, cfg, func() gcn.Source { return memorySource(t, &g, scheme, 11, true) })
				got := shardsOf(t, shape, cfg, func() gcn.Source { return d })
				compareShards(t, w, got, cfg.Layers)
			}
		}
	}
}
