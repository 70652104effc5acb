package neighbor

import (
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/spmm"
)

// testGraph is a small SBM graph with its normalised adjacency.
func testGraph(t testing.TB, n int) *dataset.Graph {
	t.Helper()
	c := dataset.DefaultSBMConfig(n)
	c.Features, c.Classes, c.AvgDegree, c.Seed = 12, 3, 6, 7
	c.TrainFrac, c.ValFrac, c.TestFrac = 0.5, 0.25, 0.25
	g, err := dataset.SBM(c)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// ringGraph is g (features, labels, splits) on a 2k-regular ring instead
// of its edges: every vertex joined to the k nearest on either side, so
// that SAGE's mean weights 1/(2k) are exact for k a power of two (no
// rounding ties for mixed precision to split; see TestFullFanoutStepEqualsReference).
func ringGraph(g *dataset.Graph, k int) *dataset.Graph {
	var ri, ci []int32
	for i := range g.N {
		for d := 1; d <= k; d++ {
			ri, ci = append(ri, int32(i), int32(i)), append(ci, int32((i+d)%g.N), int32((i-d+g.N)%g.N))
		}
	}
	r := *g
	r.Adj = spmm.FromCOO(g.N, g.N, ri, ci, nil)
	return &r
}

func modelConfig(g *dataset.Graph, layer gcn.Layer, layers int, dropout float64) gcn.Config {
	return gcn.Config{Features: g.F, Hidden: 8, Classes: g.Classes, Layers: layers, Dropout: dropout, Layer: layer, Seed: 11}
}

// rankSetup is one rank's neighbor-mode pieces over a whole graph.
type rankSetup struct {
	g       *Graph
	model   *Model
	trainer *Trainer
	builder *Builder
	seeds   *Seeds
}

func setupRank(t testing.TB, c collectives.Comm, dg *dataset.Graph, cfg gcn.Config, fanouts []int, batch int) *rankSetup {
	return setupRankOn(t, c, device.NewNative(1), dg, cfg, fanouts, batch)
}

// testDevices make the devices the GAT tests run on: Native, and the CPU
// device (multithreaded, its own GAT kernels) where cgo builds it.
var testDevices = []func() device.Device{func() device.Device { return device.NewNative(1) }}

// setupRankOn is setupRank with the model on dev.
func setupRankOn(t testing.TB, c collectives.Comm, dev device.Device, dg *dataset.Graph, cfg gcn.Config, fanouts []int, batch int) *rankSetup {
	hat := dataset.NormalizeGCN(dg.Adj)
	g, err := NewGraph(hat, dg.F, dg.Classes, dg.Features, dg.Labels, dg.Train, dg.Val, dg.Test, c.Rank(), c.Size())
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(dev, cfg, gcn.DefaultOptimizer())
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSeeds(g.Train, cfg.Seed, c.Size(), c.Rank(), batch)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(g, s, cfg.Layer, fanouts, cfg.Seed)
	t.Cleanup(b.Close)
	return &rankSetup{g: g, model: m, trainer: NewTrainer(c, g, m), builder: b, seeds: s}
}

func relErr(got, want float64) float64 {
	d := got - want
	if d < 0 {
		d = -d
	}
	s := want
	if s < 0 {
		s = -s
	}
	return d / max(s, 1e-3)
}
