package gcn

import (
	"maps"
	"slices"
	"testing"

	"scalegnn/collectives"
	"scalegnn/grid"
	"scalegnn/permute"
)

// TestShardsFollowTheGridRule: the shards a rank keeps, and the shard every
// layer multiplies by, are those of grid.ShardFor for 1 to 7 layers, with
// one vertex order (none, single) and two (double); a mini-batch keeps the
// same set.
func TestShardsFollowTheGridRule(t *testing.T) {
	p := newProblem(11, 23, 5, 3, 4)
	shape := xyz(1, 2, 1)
	for layers := 1; layers <= 7; layers++ {
		for _, scheme := range []permute.Scheme{permute.None, permute.Single, permute.Double} {
			cfg := Config{Features: p.f, Hidden: 4, Classes: p.c, Layers: layers, Seed: 3}
			perms := permute.New(p.n, scheme, 5)
			orders := NewOrders(p.n, perms.P1, perms.P2)
			two := scheme == permute.Double
			want := grid.ShardsOf(layers, two)
			runLocal(t, shape.Ranks(), func(w collectives.Comm) error {
				_, m, bb, err := batchModel(w, shape, cfg, DefaultOptimizer(), p, orders, 9, p.n/2)
				if err != nil {
					return err
				}
				batch, err := bb.Build(0)
				if err != nil {
					return err
				}
				for name, sh := range map[string]*Shards{"full graph": m.full.sh, "batch": batch} {
					got := slices.SortedFunc(maps.Keys(sh.adj), cmpShard)
					if !slices.Equal(got, slices.SortedFunc(slices.Values(want), cmpShard)) {
						t.Errorf("%d layers, %v, %s: shards %v, want %v", layers, scheme, name, got, want)
					}
					for l := range layers {
						if k := sh.shardKey(l); k != grid.ShardFor(l, two) {
							t.Errorf("%d layers, %v, %s: layer %d uses %v, want %v", layers, scheme, name, l, k, grid.ShardFor(l, two))
						}
					}
				}
				return nil
			})
		}
	}
}

func cmpShard(a, b grid.Shard) int {
	if a.Layout != b.Layout {
		return a.Layout - b.Layout
	}
	return a.Parity - b.Parity
}
