package grappa

import (
	"os"
	"testing"

	"scalegnn/dataset"
)

// TestMeasurePlanetoid prints what a partition costs and covers on the
// built-in Planetoid graphs, per worker count and partition kind, averaged
// over every worker and super-epoch of one sweep: the share of vertices
// and edges a worker holds, the mean coverage ĉ of its training vertices
// and the batch (eq. 12) and shrinkage (eq. 18) factors for batch_size = 0.
// Run with GRAPPA_MEASURE=1 go test -run Measure -v ./grappa.
func TestMeasurePlanetoid(t *testing.T) {
	if os.Getenv("GRAPPA_MEASURE") == "" {
		t.Skip("set GRAPPA_MEASURE=1 to measure")
	}
	for _, name := range []string{"cora", "citeseer"} {
		g, err := dataset.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{2, 4, 8} {
			for _, k := range []struct {
				kind Kind
				hops int
				name string
			}{{Induced, 0, "induced"}, {Halo, 2, "halo-2"}, {Halo, 3, "halo-3"}} {
				ch, _ := SplitRandom(g.N, w, 1)
				sc, _ := NewSchedule(w, w)
				var verts, edges, cov, fb, fs, parts float64
				for s := range sc.Cover() {
					for wk := range w {
						b, x := sc.Partition(wk, s)
						p := Build(g.Adj, ch, g.Train, b, x, k.kind, k.hops)
						in := make([]bool, g.N)
						for _, v := range p.Verts {
							in[v] = true
						}
						e := 0
						for _, v := range p.Verts {
							for _, u := range g.Adj.ColIdx[g.Adj.RowPtr[v]:g.Adj.RowPtr[v+1]] {
								if in[u] {
									e++
								}
							}
						}
						l, gl := Degrees(g.Adj, p)
						verts += float64(len(p.Verts)) / float64(g.N)
						edges += float64(e) / float64(g.Adj.NNZ())
						cov += Coverage(l, gl)
						fb += Batch.Factor(l, gl)
						fs += Shrinkage.Factor(l, gl)
						parts++
					}
				}
				t.Logf("%-8s W=%d %-7s vertices %5.1f%% edges %5.1f%% coverage %.3f factor batch %.3f shrinkage %.5f",
					name, w, k.name, 100*verts/parts, 100*edges/parts, cov/parts, fb/parts, fs/parts)
				if k.kind == Induced {
					// A 2-layer GCN of hidden 128 with no input projection:
					// F·128 + 128·classes weights (biases aside).
					params := g.F*128 + 128*g.Classes
					t.Logf("%-8s W=%d chunk read %.2f MB per boundary, gradient all-reduce %.2f MB per step", name, w,
						float64(ChunkBytes(g.Adj, ch, 0, g.F))/1e6, float64(GradientBytes(params, w))/1e6)
				}
			}
		}
	}
}
