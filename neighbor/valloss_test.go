package neighbor

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
)

// TestEvaluateValLoss: the evaluation's validation loss equals the mean
// cross-entropy computed directly (gcn.Reference.Loss) from the logits
// gathered from every rank, on 1, 3 and 4 ranks, and the serial
// reference's.
func TestEvaluateValLoss(t *testing.T) {
	dg := testGraph(t, 200)
	hat := dataset.NormalizeGCN(dg.Adj)
	for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer} {
		cfg := modelConfig(dg, layer, 3, 0)
		adj := hat
		if layer == gcn.SAGELayer {
			adj = gcn.MeanAdjacency(hat)
		}
		ref := gcn.NewReference(cfg, gcn.DefaultOptimizer(), adj, dg.Features, dg.Labels, dg.Train)
		serial := ref.Loss(ref.Forward(false, 0), dg.Val)
		for _, ranks := range []int{1, 3, 4} {
			errs := collectives.RunLocal(ranks, func(c collectives.Comm) error {
				rs := setupRank(t, c, dg, cfg, []int{2, 2, 2}, 4)
				ev := NewEvaluator(c, rs.g, rs.model)
				z, err := ev.forward()
				if err != nil {
					return err
				}
				C := dg.Classes
				block := make([]float32, z.Rows()*z.Cols())
				device.DownloadMat(rs.model.dev, block, z)
				all := make([]float64, dg.N*C)
				for k, v := range block {
					all[rs.g.V0*C+k] = float64(v)
				}
				if err := c.AllReduceF64(all, collectives.Sum); err != nil {
					return err
				}
				want := ref.Loss(all, dg.Val)
				acc, err := ev.Evaluate()
				if err != nil {
					return err
				}
				if d := math.Abs(acc.ValLoss - want); !(d <= 1e-6*math.Max(1, want)) || want <= 0 {
					return fmt.Errorf("%v on %d ranks: validation loss %.9g, from the gathered logits %.9g", layer, ranks, acc.ValLoss, want)
				}
				if d := math.Abs(acc.ValLoss - serial); !(d <= 1e-5*math.Max(1, serial)) {
					return fmt.Errorf("%v on %d ranks: validation loss %.9g, serial reference %.9g", layer, ranks, acc.ValLoss, serial)
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
