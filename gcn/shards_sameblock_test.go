package gcn

import (
	"fmt"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// TestShardsKeepSameBlockOnce: shards that hold the same block on every
// rank (grid.Shape.SameBlock) are one shard, kept once, with a transpose
// if any layer using it needs one; every other pair stays apart; and every
// shard, shared or not, is its block of the source, transpose included.
// On a 1×1×1 grid with one vertex order a three-layer model keeps one Â
// and one Âᵀ instead of three and two.
func TestShardsKeepSameBlockOnce(t *testing.T) {
	p := newProblem(41, 37, 11, 5, 4)
	cfg := testConfigs["deep"] // three layers: every layout, transposes for layers 1 and 2
	for _, scheme := range []permute.Scheme{permute.None, permute.Single, permute.Double} {
		for _, shape := range []grid.Shape{xyz(1, 1, 1), xyz(2, 1, 1), xyz(1, 1, 3), xyz(2, 2, 2), xyz(1, 2, 3)} {
			t.Run(fmt.Sprintf("%v/%v", scheme, shape), func(t *testing.T) {
				perms := permute.New(p.n, scheme, 5)
				orders := NewOrders(p.n, perms.P1, perms.P2)
				runLocal(t, shape.Ranks(), func(w collectives.Comm) error {
					g, err := grid.New(w, shape)
					if err != nil {
						return err
					}
					src, err := NewMemorySource(p.g, orders)
					if err != nil {
						return err
					}
					sh, err := NewShards(g, cfg, src)
					if err != nil {
						return err
					}
					distinct := map[*adjShard]bool{}
					for a, sa := range sh.adj {
						distinct[sa] = true
						for b, sb := range sh.adj {
							if (sa == sb) != shape.SameBlock(a, b) {
								return fmt.Errorf("shards %v and %v: shared %v, SameBlock %v", a, b, sa == sb, shape.SameBlock(a, b))
							}
						}
						r, c := a.Axes()
						r0, r1 := g.Range(p.n, r)
						c0, c1 := g.Range(p.n, c)
						want, err := src.AdjBlock(a.RowOrder(), r0, r1, a.ColOrder(), c0, c1)
						if err != nil {
							return err
						}
						if err := sameCSR(sa.a, want); err != nil {
							return fmt.Errorf("shard %v: %v", a, err)
						}
						if sa.at != nil {
							if err := sameCSR(sa.at, spmm.Transpose(want)); err != nil {
								return fmt.Errorf("shard %v transpose: %v", a, err)
							}
						}
					}
					for l := 1; l < cfg.Layers; l++ { // layers 1 and 2 need Âᵀ
						if sh.adj[sh.shardKey(l)].at == nil {
							return fmt.Errorf("layer %d's shard %v has no transpose", l, sh.shardKey(l))
						}
					}
					if shape.Ranks() == 1 && scheme != permute.Double && len(distinct) != 1 {
						return fmt.Errorf("%d distinct shards on a 1×1×1 grid with one vertex order; want 1", len(distinct))
					}
					return nil
				})
			})
		}
	}
}

// TestEvalShards: shards for evaluation only keep no transposes, a model
// on them evaluates exactly as one on training shards (same weights,
// same accuracies), and training it panics instead of reading a missing
// transpose.
func TestEvalShards(t *testing.T) {
	p := newProblem(43, 41, 11, 5, 4)
	cfg := testConfigs["deep"]
	for _, shape := range []grid.Shape{xyz(1, 1, 1), xyz(2, 2, 2), xyz(1, 2, 3)} {
		perms := permute.New(p.n, permute.Single, 5)
		orders := NewOrders(p.n, perms.P1, perms.P2)
		runLocal(t, shape.Ranks(), func(w collectives.Comm) error {
			g, err := grid.New(w, shape)
			if err != nil {
				return err
			}
			src, err := NewMemorySource(p.g, orders)
			if err != nil {
				return err
			}
			var acc [2]Accuracy
			for k, build := range []func(*grid.Grid, Config, Source) (*Shards, error){NewShards, NewEvalShards} {
				sh, err := build(g, cfg, src)
				if err != nil {
					return err
				}
				for key, s := range sh.adj {
					if k == 1 && s.at != nil {
						return fmt.Errorf("%v: evaluation shard %v keeps a transpose", shape, key)
					}
				}
				m, err := NewModel(g, device.Host(1), cfg, DefaultOptimizer(), sh, Options{})
				if err != nil {
					return err
				}
				if acc[k], err = m.Evaluate(); err != nil {
					return err
				}
				if k == 1 {
					func() {
						defer func() {
							if recover() == nil {
								err = fmt.Errorf("%v: training on evaluation shards did not panic", shape)
							}
						}()
						m.ForwardBackward(0)
					}()
					if err != nil {
						return err
					}
				}
			}
			if acc[0] != acc[1] {
				return fmt.Errorf("%v: accuracy %+v on training shards, %+v on evaluation shards", shape, acc[0], acc[1])
			}
			return nil
		})
	}
}
