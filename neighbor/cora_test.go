package neighbor

import (
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/sampler"
)

// TestCoraTrains: SAGE, GCN and GAT in neighbor mode, fanouts [25, 10],
// one rank, 50 epochs of 136 seeds a step, reach a sane test accuracy on
// Cora (full-graph GCN reaches 81%; 70% catches a model that does not
// learn).
func TestCoraTrains(t *testing.T) {
	if testing.Short() {
		t.Skip("trains Cora")
	}
	dg, err := dataset.Builtin("cora")
	if err != nil {
		t.Fatal(err)
	}
	dataset.RowNormalize(dg)
	for _, layer := range []gcn.Layer{gcn.SAGELayer, gcn.GCNLayer, gcn.GATLayer} {
		cfg := gcn.Config{Features: dg.F, Hidden: 16, Classes: dg.Classes, Layers: 2, Dropout: 0.5, Layer: layer, Seed: 1}
		if layer == gcn.GATLayer {
			// Veličković et al.'s Cora model: 8 heads of 8, one output
			// head (7 s of the test's 18 on one core).
			cfg.Hidden, cfg.Heads, cfg.OutputHeads = 8, 8, 1
		}
		errs := collectives.RunLocal(1, func(c collectives.Comm) error {
			rs := setupRank(t, c, dg, cfg, []int{25, 10}, 136)
			pf := sampler.NewPrefetcher(rs.builder.NewBatch, rs.builder.BuildInto, 0, true)
			defer pf.Close()
			for range 50 * rs.seeds.StepsPerEpoch() {
				b, _, _, err := pf.Next()
				if err != nil {
					return err
				}
				if _, err := rs.trainer.TrainStep(b); err != nil {
					return err
				}
				pf.Release(b)
			}
			acc, err := NewEvaluator(c, rs.g, rs.model).Evaluate()
			if err != nil {
				return err
			}
			t.Logf("%v: test accuracy %.3f after 50 epochs", layer, acc.Test)
			if acc.Test < 0.70 {
				t.Errorf("%v: test accuracy %.3f after 50 epochs; expected > 0.70", layer, acc.Test)
			}
			return nil
		})
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}
