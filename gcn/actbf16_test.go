package gcn

import (
	"fmt"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/permute"
)

// TestActBF16Exact: in mixed precision, a model that keeps its hidden
// outputs in bfloat16 only and computes dF̃ into them (reuse.go's
// actBF16, actbInPrev, dfInActBF16) computes exactly what the model
// computes with them in float32, rounded where the next layer's
// aggregation reads them: the same losses, weights and evaluation bit
// for bit, with dropout (0.3 and 0.5: the outputs are the next layer's
// F̃, and dF̃ is masked by the dropout and the ReLU a block at a time
// before it is rounded) and without, on grids whose Q and R groups are
// one rank for some layers and several for others, full graph and
// mini-batch. The bfloat16 path must have been taken where the rule
// says so: on one rank by every GCN model without a norm, the masked
// dF̃ exactly where there is dropout.
func TestActBF16Exact(t *testing.T) {
	deep := testConfigs["deep"]
	deep.Dropout = 0
	wide := deep
	wide.Layers, wide.Hidden = 4, 9
	// SAGE layers after SAGE layers, so that a kept output is the next
	// layer's self-term operand and dF̃ with dS comes back into it.
	sage3 := deep
	sage3.Layer = SAGELayer
	sage3Nodrop := sage3
	sage3Nodrop.Dropout = 0
	sage4 := wide
	sage4.Layer = SAGELayer
	configs := map[string]Config{"deep": testConfigs["deep"], "deep-nodrop": deep, "wide4": wide,
		"kipf": testConfigs["kipf"], "headonly": testConfigs["headonly"], "sage": testConfigs["sage"],
		"sage3": sage3, "sage3-nodrop": sage3Nodrop, "sage4": sage4}
	p := newProblem(12, 37, 11, 5, 5)
	// Blocks of a few rows (37 vertices, widths 5 to 11), so that every
	// blocked product runs several blocks and a last, shorter one.
	defer func(n int) { scratchElems = n }(scratchElems)
	scratchElems = 40
	for name, cfg := range configs {
		for _, shape := range []grid.Shape{xyz(1, 1, 1), xyz(2, 1, 1), xyz(1, 2, 1), xyz(1, 1, 3), xyz(1, 2, 3), {D: 2, X: 1, Y: 1, Z: 1}} {
			t.Run(fmt.Sprintf("%s/%v", name, shape), func(t *testing.T) {
				perms := permute.New(p.n, permute.Single, 5)
				orders := NewOrders(p.n, perms.P1, perms.P2)
				errs := collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
					g, err := grid.New(w, shape)
					if err != nil {
						return err
					}
					src, err := NewMemorySource(p.g, orders)
					if err != nil {
						return err
					}
					var ms [2]*Model
					var bbs [2]*BatchBuilder
					for k := range ms {
						sh, err := NewShards(g, cfg, src)
						if err != nil {
							return err
						}
						dev := device.BF16Products(device.NewNative(1))
						if ms[k], err = NewModel(g, dev, cfg, DefaultOptimizer(), sh, Options{Precision: device.BF16}); err != nil {
							return err
						}
						if shape.D > 1 {
							if bbs[k], err = NewBatchBuilder(g, cfg, sh, 3, 17); err != nil {
								return err
							}
						}
					}
					ms[0].actF32 = true
					used, dzbIn, masked := false, false, false
					tw := twins{ms, bbs, [2]string{"with float32 outputs", "with bfloat16 outputs"}}
					err = tw.train(3, func() {
						for _, lt := range ms[1].tp.layers {
							used, dzbIn, masked = used || lt.actbOK, dzbIn || lt.dzbIn, masked || lt.dzbMasked
						}
					})
					if err != nil {
						return err
					}
					// On one rank of one vertex order (permute.Single)
					// SAGE keeps its outputs too (selfInInput).
					gcnNoNorm := (cfg.Layer == GCNLayer || cfg.Layer == SAGELayer) && !cfg.Norm
					switch {
					case shape.Ranks() == 1 && gcnNoNorm != (used && dzbIn):
						return fmt.Errorf("one rank: an output in bfloat16 %v, a dZ back in it %v; want both %v", used, dzbIn, gcnNoNorm)
					case shape.Ranks() == 1 && gcnNoNorm && cfg.Layer == GCNLayer && masked != (cfg.Dropout > 0):
						return fmt.Errorf("one rank, dropout %g: dF̃ masked before it was rounded %v", cfg.Dropout, masked)
					}
					if err := tw.same(); err != nil {
						return err
					}
					return nil
				})
				for r, err := range errs {
					if err != nil {
						t.Errorf("rank %d: %v", r, err)
					}
				}
			})
		}
	}
}
