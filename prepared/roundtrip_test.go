package prepared

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// recorder is a gcn.Source that records every block it hands out, so that
// two sources can be compared on exactly the calls gcn.NewShards makes.
type recorder struct {
	gcn.Source
	mu    sync.Mutex
	calls []string
	out   []any
}

func (r *recorder) log(call string, v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
	r.out = append(r.out, v)
}

func (r *recorder) AdjBlock(ro, r0, r1, co, c0, c1 int) (*spmm.CSR, error) {
	a, err := r.Source.AdjBlock(ro, r0, r1, co, c0, c1)
	r.log(fmt.Sprint("adj", ro, r0, r1, co, c0, c1), a)
	return a, err
}

func (r *recorder) FeatureBlock(o, r0, r1, c0, c1 int) ([]float32, error) {
	x, err := r.Source.FeatureBlock(o, r0, r1, c0, c1)
	r.log(fmt.Sprint("feat", o, r0, r1, c0, c1), x)
	return x, err
}

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
// ranks) and returns them with the source calls each rank made.
func shardsOf(t *testing.T, shape grid.Shape, cfg gcn.Config, mk func() gcn.Source) ([]*gcn.Shards, []*recorder) {
	t.Helper()
	n := shape.Ranks()
	sh := make([]*gcn.Shards, n)
	recs := make([]*recorder, n)
	for r, err := range collectives.RunLocal(n, func(w collectives.Comm) error {
		g, err := grid.New(w, shape)
		if err != nil {
			return err
		}
		rec := &recorder{Source: mk()}
		s, err := gcn.NewShards(g, cfg, rec)
		sh[w.Rank()], recs[w.Rank()] = s, rec
		return err
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return sh, recs
}

// compareShards requires the same source calls with identical results and
// identical shards.
func compareShards(t *testing.T, want, got []*gcn.Shards, wantRec, gotRec []*recorder) {
	t.Helper()
	for r := range want {
		if !reflect.DeepEqual(wantRec[r].calls, gotRec[r].calls) {
			t.Fatalf("rank %d: calls %v, want %v", r, gotRec[r].calls, wantRec[r].calls)
		}
		for k := range wantRec[r].out {
			if !sameBlock(wantRec[r].out[k], gotRec[r].out[k]) {
				t.Fatalf("rank %d: %s differs:\n got %v\nwant %v", r, wantRec[r].calls[k], gotRec[r].out[k], wantRec[r].out[k])
			}
		}
		w, g := want[r], got[r]
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
				want, wantRec := shardsOf(t, shape, cfg, func() gcn.Source { return memorySource(t, g, c.scheme, 7, c.norm) })
				got, gotRec := shardsOf(t, shape, cfg, func() gcn.Source {
					d, err := Open(dir, LoadOptions{NormalizeFeatures: c.norm})
					if err != nil {
						t.Error(err)
					}
					return d
				})
				compareShards(t, want, got, wantRec, gotRec)
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
