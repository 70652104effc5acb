package perfmodel

import (
	"math"
	"testing"

	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grappa"
)

// TestIsolatedSize compares IsolatedSize's expected step subgraph with the
// partitions grappa builds on Cora and CiteSeer (every worker and
// super-epoch of one sweep, chunk seed 1), for 2, 4 and 8 workers, induced
// and halo partitions, 2- and 3-layer models. Tolerances: the induced
// partition's size is exact in expectation (vertices within 2%, nonzeros
// within 10%); the halo's mean field ignores clustering (a neighbour of a
// ball vertex is likelier to be in the ball already), so it overestimates,
// more with depth: within 15% for two hops, 50% for three (measured: at
// most +33% vertices and +49% nonzeros, CiteSeer on 8 workers).
func TestIsolatedSize(t *testing.T) {
	for _, name := range []string{"cora", "citeseer"} {
		g, err := dataset.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		ahat := dataset.NormalizeGCN(g.Adj)
		train := dataset.Count(g.Train)
		for _, w := range []int{2, 4, 8} {
			for _, layers := range []int{2, 3} {
				for _, halo := range []bool{false, true} {
					kind := grappa.Induced
					if halo {
						kind = grappa.Halo
					}
					ch, _ := grappa.SplitRandom(g.N, w, 1)
					sc, _ := grappa.NewSchedule(w, w)
					var verts, nnz, parts float64
					for s := range sc.Cover() {
						for wk := range w {
							b, x := sc.Partition(wk, s)
							p := grappa.Build(g.Adj, ch, g.Train, b, x, kind, layers)
							in := make([]bool, g.N)
							for _, v := range p.Verts {
								in[v] = true
							}
							for _, v := range p.Verts {
								for _, u := range ahat.ColIdx[ahat.RowPtr[v]:ahat.RowPtr[v+1]] {
									if in[u] {
										nnz++
									}
								}
							}
							verts += float64(len(p.Verts))
							parts++
						}
					}
					verts, nnz = verts/parts, nnz/parts
					j := Job{N: g.N, NNZ: int64(ahat.NNZ()), Features: g.F, Hidden: 16, Classes: g.Classes, Layers: layers, Mode: gcn.Isolated,
						Neighbor: NeighborJob{Degrees: DegreeHistogram(g.Adj.RowPtr, g.Adj.ColIdx)},
						Isolated: IsolatedJob{Halo: halo, TrainVertices: train}}
					ev, en := j.IsolatedSize(w)
					tv, tn := 0.02, 0.10
					if halo {
						tv, tn = 0.15, 0.15
						if layers == 3 {
							tv, tn = 0.5, 0.5
						}
					}
					t.Logf("%-8s W=%d L=%d halo=%v: vertices %.0f predicted %.0f, nonzeros %.0f predicted %.0f", name, w, layers, halo, verts, ev, nnz, en)
					if math.Abs(ev-verts) > tv*verts || math.Abs(en-nnz) > tn*nnz {
						t.Errorf("%s W=%d L=%d halo=%v: predicted %.0f vertices and %.0f nonzeros, built %.0f and %.0f (tolerance %g, %g)",
							name, w, layers, halo, ev, en, verts, nnz, tv, tn)
					}
				}
			}
		}
	}
}
