package perfmodel

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/method"
	"scalegnn/neighbor"
	"scalegnn/sampler"
)

// measuredMFGs samples steps steps of batch uniform seeds over adj's
// vertices and returns the mean MFG sizes, first layer first.
func measuredMFGs(t *testing.T, g *dataset.Graph, fanouts []int, batch, steps int) []MFGSize {
	t.Helper()
	s := sampler.NewNeighborSampler(g.Adj, fanouts, sampler.NeighborOptions{Threads: 1})
	defer s.Close()
	var m sampler.MFGs
	var scratch sampler.UniformScratch
	seeds := make([]int32, batch)
	out := make([]MFGSize, len(fanouts))
	for i := range steps {
		sampler.UniformInto(seeds, &scratch, 5, 0, i, g.N, batch)
		s.SampleInto(&m, seeds, sampler.Key{Seed: 5, Step: i})
		for l := range m.Layers {
			a := &m.Layers[l].A
			out[l].Dst += float64(a.Rows) / float64(steps)
			out[l].Src += float64(len(m.Layers[l].Src)) / float64(steps)
			out[l].Edges += float64(a.NNZ()) / float64(steps)
		}
	}
	return out
}

// TestExpectedMFGs: the mean-field frontier (ExpectedMFGs) against the
// mean of 20 sampled steps, on an R-MAT graph (heavy-tailed: the exact
// degree histogram and RMATDegrees' analytic one) and an SBM graph
// (Poisson degrees, the default). Both carry the mean field's
// approximations (R-MAT's low-degree vertices attach to its hubs more
// than in proportion to degree, which the mean field ignores): within
// 12% on R-MAT, 6% on the SBM graph.
func TestExpectedMFGs(t *testing.T) {
	rc := dataset.DefaultRMATConfig(14)
	rc.Features = 1
	rmat, err := dataset.RMAT(rc)
	if err != nil {
		t.Fatal(err)
	}
	sc := dataset.DefaultSBMConfig(20000)
	sc.Features, sc.AvgDegree = 1, 10
	sbm, err := dataset.SBM(sc)
	if err != nil {
		t.Fatal(err)
	}
	off := func(g *dataset.Graph) float64 { return float64(g.Adj.NNZ()) }
	for _, tc := range []struct {
		name    string
		g       *dataset.Graph
		degrees []float64
		fanouts []int
		batch   int
		edgeTol float64
		srcTol  float64
	}{
		{"rmat14 exact degrees", rmat, DegreeHistogram(rmat.Adj.RowPtr, rmat.Adj.ColIdx), []int{15, 10, 5}, 256, 0.12, 0.12},
		{"rmat14 analytic degrees", rmat, RMATDegrees(14, rc.EdgeFactor, rc.A, rc.B, rc.C, off(rmat)), []int{15, 10, 5}, 256, 0.1, 0.1},
		{"rmat14 [25,10]", rmat, DegreeHistogram(rmat.Adj.RowPtr, rmat.Adj.ColIdx), []int{25, 10}, 64, 0.1, 0.1},
		{"sbm Poisson", sbm, nil, []int{15, 10, 5}, 128, 0.06, 0.06},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := Job{N: tc.g.N, NNZ: int64(tc.g.Adj.NNZ() + tc.g.N), Layers: len(tc.fanouts),
				Neighbor: NeighborJob{Fanouts: tc.fanouts, Seeds: tc.batch, Degrees: tc.degrees}}
			want := measuredMFGs(t, tc.g, tc.fanouts, tc.batch, 20)
			got := j.ExpectedMFGs()
			for l := range want {
				t.Logf("layer %d: edges %.0f measured, %.0f expected; sources %.0f measured, %.0f expected",
					l, want[l].Edges, got[l].Edges, want[l].Src, got[l].Src)
				if e := math.Abs(got[l].Edges-want[l].Edges) / want[l].Edges; e > tc.edgeTol {
					t.Errorf("layer %d: %.0f edges expected, %.0f measured (%.1f%% off; tolerance %.0f%%)", l, got[l].Edges, want[l].Edges, 100*e, 100*tc.edgeTol)
				}
				if e := math.Abs(got[l].Src-want[l].Src) / want[l].Src; e > tc.srcTol {
					t.Errorf("layer %d: %.0f sources expected, %.0f measured (%.1f%% off; tolerance %.0f%%)", l, got[l].Src, want[l].Src, 100*e, 100*tc.srcTol)
				}
			}
		})
	}
}

// TestNeighborCountersEqualModel: on 1, 3 and 4 in-process ranks, every
// rank's counted training bytes of every step equal the model's
// NeighborStepBytes for that step's exchange, which is also what the
// collectives of NeighborStepTrace add up to; the model counts the
// model's parameters as package neighbor does. So the prediction's
// per-step bytes are the counters' at the predicted frontier. In bf16 the
// features are stored, and exchanged, in bfloat16 (half the row bytes).
func TestNeighborCountersEqualModel(t *testing.T) {
	sc := dataset.DefaultSBMConfig(300)
	sc.Features, sc.Classes, sc.AvgDegree, sc.Seed = 12, 3, 6, 7
	sc.TrainFrac, sc.ValFrac, sc.TestFrac = 0.5, 0.25, 0.25
	dg, err := dataset.SBM(sc)
	if err != nil {
		t.Fatal(err)
	}
	hat := dataset.NormalizeGCN(dg.Adj)
	fanouts := []int{4, 3, 2}
	for _, prec := range []device.Precision{device.Float32, device.BF16} {
		for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer, gcn.GATLayer} {
			for _, ranks := range []int{1, 3, 4} {
				t.Run(fmt.Sprintf("%v-%v-%d", prec, layer, ranks), func(t *testing.T) {
					heads := 0
					if layer == gcn.GATLayer {
						heads = 3
					}
					cfg := gcn.Config{Features: dg.F, Hidden: 8, Classes: dg.Classes, Layers: 3, Dropout: 0.5, Layer: layer, Heads: heads, OutputHeads: heads, Seed: 11}
					j := Job{N: dg.N, NNZ: int64(hat.NNZ()), Features: dg.F, Hidden: 8, Classes: dg.Classes, Layers: 3, Layer: layer, Heads: heads, OutputHeads: heads, Dropout: 0.5,
						Mode: gcn.Neighbor, Neighbor: NeighborJob{Fanouts: fanouts, Seeds: 48 / ranks}, Precision: prec}
					errs := collectives.RunLocal(ranks, func(c collectives.Comm) error {
						g, err := neighbor.NewGraph(hat, dg.F, dg.Classes, dg.Features, dg.Labels, dg.Train, dg.Val, dg.Test, c.Rank(), ranks)
						if err != nil {
							return err
						}
						if gcn.FeaturesInBF16(prec) {
							g.ToBF16(make([]int32, g.V1-g.V0))
						}
						m, err := neighbor.NewModel(device.WithPrecision(device.NewNative(1), prec), cfg, gcn.DefaultOptimizer())
						if err != nil {
							return err
						}
						if m.NumParams() != j.NeighborParams() {
							return fmt.Errorf("model has %d parameters, perfmodel counts %d", m.NumParams(), j.NeighborParams())
						}
						seeds, err := neighbor.NewSeeds(g.Train, 11, ranks, c.Rank(), 48/ranks)
						if err != nil {
							return err
						}
						b := neighbor.NewBuilder(g, seeds, layer, fanouts, 11)
						defer b.Close()
						tr := neighbor.NewTrainer(c, g, m)
						batch := b.NewBatch()
						for step := range 3 {
							if err := b.BuildInto(step, batch); err != nil {
								return err
							}
							before := c.Counters().TotalBytes()
							if _, err := tr.TrainStep(batch); err != nil {
								return err
							}
							counted := c.Counters().TotalBytes() - before
							e := tr.Exch
							model := j.NeighborStepBytes(e.Requested, e.Served, ranks)
							var sizes []MFGSize
							for _, l := range batch.MFGs.Layers {
								sizes = append(sizes, MFGSize{Dst: float64(l.A.Rows), Src: float64(len(l.Src)), Edges: float64(l.A.NNZ())})
							}
							var traced int64
							for _, cl := range j.NeighborStepTrace(ranks, sizes, e.Requested, e.Served).Comm {
								traced += cl.Bytes()
							}
							if counted != model || traced != model || (ranks > 1 && counted == 0) {
								return fmt.Errorf("rank %d step %d: counted %d bytes, NeighborStepBytes %d, trace %d", c.Rank(), step, counted, model, traced)
							}
						}
						return nil
					})
					for _, err := range errs {
						if err != nil {
							t.Error(err)
						}
					}
				})
			}
		}
	}
}

// TestPredictNeighbor: the prediction's parts on a small job: bytes per
// epoch are steps × NeighborStepBytes at the expected remote frontier
// (plus evaluation's, none with EvalEvery 0), the time grows with
// ranks' communication but the per-rank memory of the feature share
// shrinks, prefetch hides the build time, and a bad job is one error.
func TestPredictNeighbor(t *testing.T) {
	j := Job{N: 100000, NNZ: 100000 * 21, Features: 128, Hidden: 128, Classes: 32, Layers: 3, Layer: gcn.SAGELayer, Mode: gcn.Neighbor,
		Neighbor: NeighborJob{Fanouts: []int{15, 10, 5}, Seeds: 256, TrainVertices: 10000}}
	m := DefaultMachine()
	p8, err := PredictNeighbor(j, m, 8, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	mfg := j.ExpectedMFGs()
	r := int(math.Round(mfg[0].Src * 7 / 8))
	if want := int64(j.NeighborSteps(8)) * j.NeighborStepBytes(r, r, 8); p8.CommBytes != want || want == 0 {
		t.Errorf("8 ranks: %d bytes per epoch, expected %d", p8.CommBytes, want)
	}
	if p8.Algorithm != method.NeighborSampling || p8.Grid != "neighbor Gd=8" || p8.Epoch <= 0 || p8.Epoch != p8.Comm+p8.SpMM+p8.GEMM+p8.Other {
		t.Errorf("8 ranks: %+v", p8)
	}
	p1, _ := PredictNeighbor(j, m, 1, 0, 0)
	if p1.CommBytes != 0 || p1.Memory.Features <= p8.Memory.Features || p1.Memory.Adjacency != p8.Memory.Adjacency+csrBytes(j.N, j.adjNNZ())-csrBytes(j.N/8, j.adjNNZ()/8) {
		t.Errorf("1 rank: %d bytes, features %d (8 ranks %d), topology %d (8 ranks %d)", p1.CommBytes, p1.Memory.Features, p8.Memory.Features, p1.Memory.Adjacency, p8.Memory.Adjacency)
	}
	pf := j
	pf.Neighbor.Prefetch = true
	q, _ := PredictNeighbor(pf, m, 8, 0, 0)
	if !(q.Other < p8.Other) {
		t.Errorf("prefetch: other %.3g s, without %.3g s", q.Other, p8.Other)
	}
	bad := j
	bad.Neighbor.Fanouts = []int{5}
	if _, err := PredictAll(bad, m, Options{Ranks: 8}, Choices{method.NeighborSampling: true}); err == nil {
		t.Error("fanouts for 1 of 3 layers: no error")
	}
	all, err := PredictAll(j, m, Options{Ranks: 8}, Choices{method.NeighborSampling: true})
	if err != nil || len(all) != 1 || all[0].Grid != "neighbor Gd=8" {
		t.Errorf("PredictAll: %v, %v", all, err)
	}
}
