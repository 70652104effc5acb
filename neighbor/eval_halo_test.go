package neighbor

import (
	"fmt"
	"slices"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
)

// TestEvaluateHalo: the evaluation receives exactly the rows its block's
// operator names outside the block (its compact width is the block plus
// the distinct such columns, fewer than every vertex), the graph the
// training samples from is left as it was (the operator's renumbered
// columns are a copy: sharing them once corrupted training after the
// first evaluation), and a second evaluation gives the first's result.
func TestEvaluateHalo(t *testing.T) {
	dg := testGraph(t, 200)
	for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer, gcn.GATLayer} {
		cfg := gcn.Config{Features: dg.F, Hidden: 8, Classes: dg.Classes, Layers: 2, Layer: layer, Seed: 3}
		if layer == gcn.GATLayer {
			cfg.Heads, cfg.OutputHeads = 2, 1
		}
		for _, ranks := range []int{1, 3, 5} {
			name := fmt.Sprintf("%v on %d ranks", layer, ranks)
			errs := collectives.RunLocal(ranks, func(c collectives.Comm) error {
				rs := setupRankOn(t, c, device.NewNative(1), dg, cfg, []int{3, 3}, 8)
				g := rs.g
				hat, topo := slices.Clone(g.Hat.ColIdx), slices.Clone(g.Topo.ColIdx)
				ev := NewEvaluator(c, g, rs.model)
				first, err := ev.Evaluate()
				if err != nil {
					return err
				}
				if !slices.Equal(hat, g.Hat.ColIdx) || !slices.Equal(topo, g.Topo.ColIdx) {
					return fmt.Errorf("%s: evaluation changed the graph's column indices", name)
				}
				src := evalRows(g, layer)
				outside := map[int32]bool{}
				for _, col := range src.ColIdx {
					if int(col) < g.V0 || int(col) >= g.V1 {
						outside[col] = true
					}
				}
				if want := g.V1 - g.V0 + len(outside); ev.halo.rows != want || (ranks > 1 && want >= g.N) {
					return fmt.Errorf("%s, rank %d: %d compact rows, want %d of %d", name, c.Rank(), ev.halo.rows, want, g.N)
				}
				again, err := ev.Evaluate()
				if err != nil {
					return err
				}
				if again != first {
					return fmt.Errorf("%s: a second evaluation gives %+v, the first %+v", name, again, first)
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
}
