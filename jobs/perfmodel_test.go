package jobs

import (
	"math"
	"testing"

	"scalegnn/dataset"
)

// TestExpectedRMATNonzeros compares the closed-form expectation with
// generated graphs: within 1% (the relative standard deviation of the count
// is far below that at these sizes).
func TestExpectedRMATNonzeros(t *testing.T) {
	for _, scale := range []int{10, 13} {
		g, err := dataset.RMAT(dataset.RMATConfig{Scale: scale, EdgeFactor: 16, A: 0.57, B: 0.19, C: 0.19, D: 0.05,
			Classes: 2, Features: 1, TrainFrac: 0.1, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		got, want := expectedRMATNonzeros(scale, 16, 0.57, 0.19, 0.19), float64(g.Adj.NNZ())
		if math.Abs(got-want) > 0.01*want {
			t.Errorf("scale %d: expected %.0f nonzeros, generated %.0f", scale, got, want)
		}
	}
}

// TestEstimateGraphSizeSBM checks the SBM shortcut against the generator:
// within 0.5%.
func TestEstimateGraphSizeSBM(t *testing.T) {
	c := DefaultConfig().Dataset
	c.Source = SourceSBM
	c.SBM.N = 3000
	gs, err := EstimateGraphSize(c)
	if err != nil {
		t.Fatal(err)
	}
	g, err := LoadGraph(c)
	if err != nil {
		t.Fatal(err)
	}
	want := float64(dataset.NormalizeGCN(g.Adj).NNZ())
	if gs.N != g.N || math.Abs(float64(gs.NNZ)-want) > 0.005*want || gs.Features != g.F || gs.Classes != g.Classes {
		t.Errorf("estimate %+v, generated N=%d nnz=%.0f F=%d C=%d", gs, g.N, want, g.F, g.Classes)
	}
}
