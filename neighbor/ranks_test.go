package neighbor

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/sampler"
)

// trainLosses trains steps steps on ranks in-process ranks, batch seeds
// each, with prefetching, and returns the mean loss over ranks of every
// step, the counted training bytes of every rank and step, and the
// formula's.
func trainLosses(t *testing.T, dg *dataset.Graph, cfg gcn.Config, fanouts []int, ranks, batch, steps int) (losses []float64, counted, formula [][]int64) {
	per := make([][]float64, ranks)
	counted, formula = make([][]int64, ranks), make([][]int64, ranks)
	errs := collectives.RunLocal(ranks, func(c collectives.Comm) error {
		rs := setupRank(t, c, dg, cfg, fanouts, batch)
		pf := sampler.NewPrefetcher(rs.builder.NewBatch, rs.builder.BuildInto, 0, true)
		defer pf.Close()
		ctr := c.Counters()
		for range steps {
			b, _, _, err := pf.Next()
			if err != nil {
				return err
			}
			before := ctr.TotalBytes()
			loss, err := rs.trainer.TrainStep(b)
			if err != nil {
				return err
			}
			pf.Release(b)
			per[c.Rank()] = append(per[c.Rank()], loss)
			counted[c.Rank()] = append(counted[c.Rank()], ctr.TotalBytes()-before)
			e := rs.trainer.Exch
			formula[c.Rank()] = append(formula[c.Rank()], StepBytes(e.Requested, e.Served, RowWords(dg.F, false), rs.model.NumParams(), ranks))
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	losses = make([]float64, steps)
	for _, p := range per {
		for s, l := range p {
			losses[s] += l / float64(ranks)
		}
	}
	return losses, counted, formula
}

// TestRanksTrainAlike: the same job on 1, 2 and 8 ranks, with the same
// global batch per step (8·b seeds), takes the same losses step after
// step: sampling, dropout and the seed permutation depend on no rank, and
// the averaged gradient is the global batch's up to summation order. The
// steps cross an epoch boundary (a new permutation, a wrapped last batch).
// GAT (2 heads, 2 output heads, attention dropout) runs on 3 and 6 ranks.
func TestRanksTrainAlike(t *testing.T) {
	dg := testGraph(t, 400)
	for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer, gcn.GATLayer} {
		t.Run(layer.String(), func(t *testing.T) {
			cfg := modelConfig(dg, layer, 2, 0.5)
			rankCounts := []int{2, 8}
			if layer == gcn.GATLayer {
				cfg.Heads, cfg.OutputHeads = 2, 2
				rankCounts = []int{3, 6}
			}
			const global, steps = 48, 7
			ref, _, _ := trainLosses(t, dg, cfg, []int{5, 3}, 1, global, steps)
			for _, ranks := range rankCounts {
				got, _, _ := trainLosses(t, dg, cfg, []int{5, 3}, ranks, global/ranks, steps)
				for s := range steps {
					if e := relErr(got[s], ref[s]); e > 1e-5 {
						t.Errorf("%d ranks, step %d: loss %.9g, 1 rank %.9g (rel %.2g)", ranks, s, got[s], ref[s], e)
					}
				}
			}
		})
	}
}

// TestCountedBytesEqualFormula: every rank's counted training bytes of
// every step equal StepBytes of its exchange (and 0 on one rank).
func TestCountedBytesEqualFormula(t *testing.T) {
	dg := testGraph(t, 300)
	for _, ranks := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(ranks), func(t *testing.T) {
			cfg := modelConfig(dg, gcn.SAGELayer, 3, 0.5)
			_, counted, formula := trainLosses(t, dg, cfg, []int{4, 3, 2}, ranks, 48/ranks, 4)
			for r := range ranks {
				for s := range counted[r] {
					if counted[r][s] != formula[r][s] || (ranks > 1 && counted[r][s] == 0) {
						t.Errorf("rank %d step %d: counted %d bytes, StepBytes %d", r, s, counted[r][s], formula[r][s])
					}
				}
			}
		})
	}
}

// TestEvaluateEqualsReference: the full-graph layer-by-layer evaluation
// on 1 and 3 ranks gives the logits (1e-5 relative to the largest) and
// the accuracies of gcn's serial forward pass.
func TestEvaluateEqualsReference(t *testing.T) {
	dg := testGraph(t, 200)
	hat := dataset.NormalizeGCN(dg.Adj)
	for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer} {
		cfg := modelConfig(dg, layer, 3, 0)
		adj := hat
		if layer == gcn.SAGELayer {
			adj = gcn.MeanAdjacency(hat)
		}
		ref := gcn.NewReference(cfg, gcn.DefaultOptimizer(), adj, dg.Features, dg.Labels, dg.Train)
		logits := ref.Forward(false, 0)
		want := gcn.Accuracy{Train: ref.Accuracy(logits, dg.Train), Val: ref.Accuracy(logits, dg.Val), Test: ref.Accuracy(logits, dg.Test)}
		for _, ranks := range []int{1, 3} {
			errs := collectives.RunLocal(ranks, func(c collectives.Comm) error {
				rs := setupRank(t, c, dg, cfg, []int{2, 2, 2}, 4)
				ev := NewEvaluator(c, rs.g, rs.model)
				z, err := ev.forward()
				if err != nil {
					return err
				}
				got := make([]float32, z.Rows()*z.Cols())
				device.DownloadMat(rs.model.dev, got, z)
				C := dg.Classes
				if e := maxRel(got, logits[rs.g.V0*C:rs.g.V1*C]); e > 1e-5 {
					return fmt.Errorf("%v on %d ranks, rank %d: logits off by %.2g", layer, ranks, c.Rank(), e)
				}
				acc, err := ev.Evaluate()
				if err != nil {
					return err
				}
				if math.Abs(acc.Train-want.Train)+math.Abs(acc.Val-want.Val)+math.Abs(acc.Test-want.Test) > 1e-12 {
					return fmt.Errorf("%v on %d ranks: accuracy %+v, reference %+v", layer, ranks, acc, want)
				}
				return nil
			})
			for _, err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		}
	}
}
