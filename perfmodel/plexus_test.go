package perfmodel

import (
	"testing"

	"scalegnn/permute"
)

// ogbnProducts is Plexus's published setting (Table 4 and §6): ogbn-products,
// 2,449,029 vertices, 126,167,053 nonzeros (61,859,140 edges in both
// directions plus the self loops), 100 features, 47 classes, three GCN
// layers of width 128, full-graph, on 64 A100s with 4 per node.
func ogbnProducts() Job {
	return Job{N: 2449029, NNZ: 126167053, Features: 100, Hidden: 128, Classes: 47, Layers: 3, Permutation: permute.Double}
}

// TestPlexusFigure5Ranking pins that, with Perlmutter's coefficients and
// bandwidths from the paper, the model prefers 3D grids over 2D and 1D ones
// for ogbn-products on 64 GPUs, as Plexus Figure 5 observes: the best grid
// is 3D; best and median of the 3D grids beat those of the 2D grids, which
// beat those of the 1D grids; and every 1D grid is slower than every 3D
// grid.
func TestPlexusFigure5Ranking(t *testing.T) {
	m, err := LoadMachine("perlmutter-plexus")
	if err != nil {
		t.Fatal(err)
	}
	preds, err := Predict(ogbnProducts(), m, Options{Ranks: 64})
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) != 28 {
		t.Fatalf("%d grids of 64 ranks, want 28", len(preds))
	}
	for i, p := range preds {
		t.Logf("%2d %-8s %dD epoch %.1f ms (comm %.1f, spmm %.1f, gemm %.2f, other %.2f)", i+1, p.Grid, Dims(p.Shape),
			1e3*p.Epoch, 1e3*p.Comm, 1e3*p.SpMM, 1e3*p.GEMM, 1e3*p.Other)
	}
	if d := Dims(preds[0].Shape); d != 3 {
		t.Errorf("the predicted best grid %s is %dD; Plexus finds a 3D grid best", preds[0].Grid, d)
	}
	byDims := map[int][]float64{} // epoch times, best first
	for _, p := range preds {
		byDims[Dims(p.Shape)] = append(byDims[Dims(p.Shape)], p.Epoch)
	}
	median := func(v []float64) float64 { return (v[(len(v)-1)/2] + v[len(v)/2]) / 2 }
	if len(byDims[1]) != 3 || len(byDims[2]) != 15 || len(byDims[3]) != 10 {
		t.Fatalf("1D/2D/3D grids: %d/%d/%d, want 3/15/10", len(byDims[1]), len(byDims[2]), len(byDims[3]))
	}
	for _, c := range []struct {
		what       string
		fast, slow float64
	}{
		{"best 3D vs best 2D", byDims[3][0], byDims[2][0]},
		{"best 2D vs best 1D", byDims[2][0], byDims[1][0]},
		{"median 3D vs median 2D", median(byDims[3]), median(byDims[2])},
		{"median 2D vs median 1D", median(byDims[2]), median(byDims[1])},
		{"slowest 3D vs fastest 1D", byDims[3][len(byDims[3])-1], byDims[1][0]},
	} {
		if !(c.fast < c.slow) {
			t.Errorf("%s: %.1f ms is not faster than %.1f ms", c.what, 1e3*c.fast, 1e3*c.slow)
		}
	}
}
