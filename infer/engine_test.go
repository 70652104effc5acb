package infer

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/spmm"
)

var configs = map[string]gcn.Config{
	"gcn":      {Features: 11, Hidden: 6, Classes: 5, Layers: 2, Dropout: 0.5, Seed: 3},
	"deep":     {Features: 11, Hidden: 6, Classes: 5, Layers: 3, Dropout: 0.3, Seed: 4},
	"extras":   {Features: 11, Hidden: 7, Classes: 5, Layers: 4, Dropout: 0.3, InputProjection: true, OutputHead: true, Norm: true, Residual: true, Seed: 5},
	"sage":     {Features: 11, Hidden: 6, Classes: 5, Layers: 2, Dropout: 0.5, Layer: gcn.SAGELayer, Seed: 8},
	"sagefull": {Features: 11, Hidden: 7, Classes: 5, Layers: 3, Dropout: 0.3, InputProjection: true, OutputHead: true, Norm: true, Residual: true, Layer: gcn.SAGELayer, Seed: 9},
	"gat":      {Features: 11, Hidden: 3, Classes: 5, Layers: 2, Heads: 3, OutputHeads: 2, Dropout: 0.5, Layer: gcn.GATLayer, Seed: 7},
	"gatfull":  {Features: 11, Hidden: 4, Classes: 5, Layers: 3, Heads: 2, Dropout: 0.3, Layer: gcn.GATLayer, InputProjection: true, OutputHead: true, Seed: 8},
}

// trained is the model cfg on g after three steps on one rank (so that
// biases and norm scales are off their initial values), its weights, its
// full-graph accuracy, logits and hidden layers' embeddings.
func trained(t *testing.T, cfg gcn.Config, g *gcn.Graph, o *gcn.Orders) (Weights, gcn.Accuracy, []float32, [][]float32) {
	t.Helper()
	var w Weights
	var acc gcn.Accuracy
	var logits []float32
	var emb [][]float32
	for r, err := range collectives.RunLocal(1, func(c collectives.Comm) error {
		gr, err := grid.New(c, grid.Shape{D: 1, X: 1, Y: 1, Z: 1})
		if err != nil {
			return err
		}
		m, err := gcn.Build(gr, device.NewNative(1), cfg, gcn.DefaultOptimizer(), g, o, gcn.Options{})
		if err != nil {
			return err
		}
		for step := range 3 {
			if _, err := m.TrainStep(step); err != nil {
				return err
			}
		}
		w = ModelWeights(m)
		if acc, err = m.Evaluate(); err != nil {
			return err
		}
		for l := 0; l <= gcn.LastHidden(cfg); l++ {
			b, err := m.Embeddings(l)
			if err != nil {
				return err
			}
			emb = append(emb, b.Data)
		}
		logits, err = m.Logits()
		return err
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return w, acc, logits, emb
}

// near fails unless got is want within 1e-5 of want's largest entry.
func near(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, the model's %d", what, len(got), len(want))
	}
	scale := 0.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	for i, v := range got {
		if d := math.Abs(float64(v - want[i])); d > 1e-5*scale {
			t.Fatalf("%s, value %d: %g, the model's %g", what, i, v, want[i])
		}
	}
}

// testProblem is the engine tests' graph (61 vertices, 11 features, 5
// classes), its single-permutation orders and a source over it.
func testProblem(t *testing.T) (*gcn.Graph, *gcn.Orders, *gcn.MemorySource) {
	t.Helper()
	g := gcn.RandomGraph(41, 61, 11, 5, 6)
	perms := permute.New(61, permute.Single, 9)
	o := gcn.NewOrders(61, perms.P1, perms.P1)
	src, err := gcn.NewMemorySource(g, o)
	if err != nil {
		t.Fatal(err)
	}
	return g, o, src
}

// TestMatchesModel: layer-wise inference gives the full-graph
// evaluation's accuracies exactly and its validation loss and logits
// within 1e-5, for GCN, SAGE and GAT models with and without input
// projection, norm, residual and output head, on 1, 2 and 3 ranks with
// row blocks that split unevenly, its activations in memory and in files.
func TestMatchesModel(t *testing.T) {
	g, o, src := testProblem(t)
	for name, cfg := range configs {
		w, want, wantLogits, wantEmb := trained(t, cfg, g, o)
		for _, tc := range []struct {
			ranks, blocks int
			files         bool
		}{{1, 1, false}, {1, 4, true}, {2, 5, false}, {3, 7, true}} {
			t.Run(fmt.Sprintf("%s/%d ranks/%d blocks/files %v", name, tc.ranks, tc.blocks, tc.files), func(t *testing.T) {
				dir := ""
				if tc.files {
					dir = t.TempDir()
				}
				logits := make([][]float32, tc.ranks)
				emb := make([][][]float32, len(wantEmb))
				for l := range emb {
					emb[l] = make([][]float32, tc.ranks)
				}
				for r, err := range collectives.RunLocal(tc.ranks, func(c collectives.Comm) error {
					e, err := New(c, device.NewNative(1), cfg, src, tc.blocks, dir)
					if err != nil {
						return err
					}
					defer e.Close()
					got, err := e.Evaluate(w)
					if err != nil {
						return err
					}
					if got.Train != want.Train || got.Val != want.Val || got.Test != want.Test ||
						math.Abs(got.ValLoss-want.ValLoss) > 1e-5*math.Max(1, want.ValLoss) {
						return fmt.Errorf("accuracy %+v, the model's %+v", got, want)
					}
					for l := range emb {
						if emb[l][c.Rank()], err = e.Embeddings(w, l); err != nil {
							return err
						}
					}
					logits[c.Rank()], err = e.Logits(w)
					return err
				}) {
					if err != nil {
						t.Fatalf("rank %d: %v", r, err)
					}
				}
				near(t, "logits", slices.Concat(logits...), wantLogits)
				for l := range emb {
					near(t, fmt.Sprintf("layer %d's embeddings", l), slices.Concat(emb[l]...), wantEmb[l])
				}
			})
		}
	}
}

// deepCase is a 61-vertex graph in memory, in one random order, the
// 3-layer "deep" model trained on it, its weights and its accuracies.
func deepCase(t *testing.T) (gcn.Source, gcn.Config, Weights, gcn.Accuracy) {
	t.Helper()
	g := gcn.RandomGraph(43, 61, 11, 5, 6)
	perms := permute.New(61, permute.Single, 9)
	o := gcn.NewOrders(61, perms.P1, perms.P1)
	mem, err := gcn.NewMemorySource(g, o)
	if err != nil {
		t.Fatal(err)
	}
	cfg := configs["deep"]
	w, want, _, _ := trained(t, cfg, g, o)
	return mem, cfg, w, want
}

// countingSource counts the adjacency strips read.
type countingSource struct {
	gcn.Source
	mu    sync.Mutex
	reads int
}

func (c *countingSource) AdjBlock(ro, r0, r1, co, c0, c1 int) (*spmm.CSR, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Source.AdjBlock(ro, r0, r1, co, c0, c1)
}

// TestCacheStrips: without a cache every layer of every evaluation reads
// each block's strip; with room for them, the first evaluation reads each
// once and the next none; with room for some, some; the accuracies are
// the same.
func TestCacheStrips(t *testing.T) {
	mem, cfg, w, want := deepCase(t)
	const blocks = 5
	for _, tc := range []struct {
		name         string
		limit        int64
		first, again int
	}{
		{"none", 0, 3 * blocks, 3 * blocks},
		{"all", 1 << 30, blocks, 0},
	} {
		src := &countingSource{Source: mem}
		for r, err := range collectives.RunLocal(1, func(c collectives.Comm) error {
			e, err := New(c, device.NewNative(1), cfg, src, blocks, "")
			if err != nil {
				return err
			}
			e.CacheStrips(tc.limit)
			for k, reads := range []int{tc.first, tc.again} {
				src.reads = 0
				got, err := e.Evaluate(w)
				if err != nil {
					return err
				}
				if got.Test != want.Test || got.Val != want.Val || got.Train != want.Train {
					return fmt.Errorf("%s: evaluation %d: accuracy %+v, the model's %+v", tc.name, k+1, got, want)
				}
				if src.reads != reads {
					return fmt.Errorf("%s: evaluation %d read %d strips, want %d", tc.name, k+1, src.reads, reads)
				}
			}
			return nil
		}) {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
	}
}

// failingSource fails to read the strip that starts at row bad.
type failingSource struct {
	gcn.Source
	bad int
}

func (f failingSource) AdjBlock(ro, r0, r1, co, c0, c1 int) (*spmm.CSR, error) {
	if r0 == f.bad {
		return nil, fmt.Errorf("reading rows [%d, %d): the disk is gone", r0, r1)
	}
	return f.Source.AdjBlock(ro, r0, r1, co, c0, c1)
}

// TestStripReadAhead: a strip is read while the block before is computed;
// a failed read, of the first strip or of one read ahead, ends the
// evaluation with its error, and a pass that reads every strip counts
// their bytes and splits its time (Times).
func TestStripReadAhead(t *testing.T) {
	mem, cfg, w, want := deepCase(t)
	const blocks = 5
	for _, bad := range []int{0, 2, blocks - 1} {
		r0, _ := grid.Block(61, blocks, bad)
		for _, err := range collectives.RunLocal(1, func(c collectives.Comm) error {
			e, err := New(c, device.NewNative(1), cfg, failingSource{Source: mem, bad: r0}, blocks, "")
			if err != nil {
				return err
			}
			_, err = e.Evaluate(w)
			return err
		}) {
			if err == nil || !strings.Contains(err.Error(), "the disk is gone") {
				t.Errorf("strip %d unreadable: %v, want its error", bad, err)
			}
		}
	}
	for r, err := range collectives.RunLocal(1, func(c collectives.Comm) error {
		e, err := New(c, device.NewNative(1), cfg, mem, blocks, "")
		if err != nil {
			return err
		}
		got, err := e.Evaluate(w)
		if err != nil {
			return err
		}
		if got.Test != want.Test || got.Val != want.Val {
			return fmt.Errorf("accuracy %+v, the model's %+v", got, want)
		}
		var bytes int64
		for k := range blocks {
			r0, r1 := grid.Block(61, blocks, k)
			a, _ := mem.AdjBlock(0, r0, r1, 0, 0, 61)
			bytes += 8*int64(a.Rows+1) + 8*int64(a.NNZ())
		}
		tm := e.Times
		if tm.StripBytes != 3*bytes || tm.Total <= 0 || tm.Read+tm.Store+tm.Gather > tm.Total {
			return fmt.Errorf("times %+v: want %d strip bytes (3 layers) and the parts within the total", tm, 3*bytes)
		}
		return nil
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
}
