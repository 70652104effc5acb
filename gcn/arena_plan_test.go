package gcn

import (
	"fmt"
	"maps"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/permute"
)

// TestArenaPlanMatchesArenas: the arena plan, from each pass's own shards,
// predicts the capacity of both arenas of every rank by pool, exactly:
// full-graph steps and evaluations, then mini-batch steps on batches of
// different shapes, every config, grids including non-power-of-two ones,
// float32 and bfloat16 sums. (perfmodel's memory tests hold its shapes to
// the same arenas.) With bfloat16 sums the model also runs in mixed
// precision (device.BF16Products), and the plan's staging (StagingStep,
// StagingEval) must be the device's, exactly.
func TestArenaPlanMatchesArenas(t *testing.T) {
	p := newProblem(5, 43, 11, 5, 5)
	shapes := []grid.Shape{xyz(1, 1, 1), xyz(2, 2, 2), xyz(1, 2, 3), xyz(3, 1, 2), {D: 2, X: 1, Y: 3, Z: 1}}
	configs := maps.Clone(testConfigs)
	maps.Copy(configs, gatTestConfigs)
	nodrop := configs["deep"]
	nodrop.Dropout = 0
	configs["deep-nodrop"] = nodrop // training keeps hidden outputs in bfloat16 too (reuse.go's actBF16)
	nodropSAGE := configs["sage"]
	nodropSAGE.Dropout = 0
	configs["sage-nodrop"] = nodropSAGE // F̃_R is the previous layer's output itself on one rank (reuse.go's selfInInput)
	sage3 := configs["deep"]
	sage3.Layer = SAGELayer
	configs["sage3"] = sage3 // hidden SAGE outputs kept in bfloat16, one the next's (reuse.go's actBF16)
	sage3.Dropout = 0
	configs["sage3-nodrop"] = sage3
	perms := permute.New(p.n, permute.Double, 7)
	// Double permutation, and one order (both the same permutation): on
	// one rank SAGE's F̃_R is then its input (selfInInput).
	for _, orders := range []*Orders{NewOrders(p.n, perms.P1, perms.P2), NewOrders(p.n, perms.P1, perms.P1)} {
		for name, cfg := range configs {
			// Without overlap the backward pass reuses H for dH on every
			// grid (reuse.go); with it, only where P is one rank.
			// The last: mixed precision with the features in bfloat16
			// (FeaturesToBF16).
			for i, run := range []Options{{Overlap: true}, {BF16: true, Overlap: true}, {}, {BF16: true}} {
				bf16, feats := run.BF16, i == 3
				for _, shape := range shapes {
					t.Run(fmt.Sprintf("%s/single-order=%v/bf16=%v/features=%v/overlap=%v/%dx%dx%dx%d", name, orders.same(), bf16, feats, run.Overlap, shape.D, shape.X, shape.Y, shape.Z), func(t *testing.T) {
						runLocal(t, shape.Ranks(), func(w collectives.Comm) error {
							g, err := grid.New(w, shape)
							if err != nil {
								return err
							}
							dev := device.WithPrecision(device.NewNative(1), device.Float32)
							if bf16 {
								dev = device.BF16Products(dev)
							}
							src, err := NewMemorySource(p.g, orders)
							if err != nil {
								return err
							}
							sh, err := NewShards(g, cfg, src)
							if err != nil {
								return err
							}
							if feats {
								sh.FeaturesToBF16(g, cfg)
							}
							m, err := NewModel(g, dev, cfg, DefaultOptimizer(), sh, run)
							if err != nil {
								return err
							}
							run := m.Options // the device's precision included
							var full, batch, high ArenaUse
							var stage Staging
							fullShape := shardShape{g, m.Shards()}
							most := func(a, b ArenaUse) ArenaUse {
								return ArenaUse{max(a.F32, b.F32), max(a.U64, b.U64), max(a.U16, b.U16), max(a.I64, b.I64)}
							}
							for step := range 2 {
								if _, err := m.TrainStep(step); err != nil {
									return err
								}
								full = full.Most(cfg.ArenaStep(fullShape, run))
								stage = stage.After(cfg.StagingStep(fullShape, run))
								if _, err := m.Evaluate(); err != nil {
									return err
								}
								full = full.Most(cfg.ArenaEval(fullShape, run))
								stage = stage.After(cfg.StagingEval(fullShape, run))
								high = most(most(high, cfg.ArenaStep(fullShape, run)), cfg.ArenaEval(fullShape, run))
							}
							// The plan counts what the passes take, not more:
							// a reservation above it would hide a reuse that
							// the plan misses.
							if got := m.full.ar.high(); got != high {
								return fmt.Errorf("the full graph's passes took at most %+v; plan %+v", got, high)
							}
							bb, err := NewBatchBuilder(g, cfg, m.Shards(), 3, 17)
							if err != nil {
								return err
							}
							for step := range 3 {
								sh, err := bb.Build(step)
								if err != nil {
									return err
								}
								m.Use(sh)
								if _, err := m.TrainStep(step); err != nil {
									return err
								}
								batch = batch.After(cfg.ArenaStep(shardShape{g, sh}, run))
								stage = stage.After(cfg.StagingStep(shardShape{g, sh}, run))
							}
							if got := device.StagingBytes(dev); bf16 && got != stage.Bytes() {
								return fmt.Errorf("mixed-precision staging %d bytes, plan %+v = %d bytes", got, stage, stage.Bytes())
							}
							gotFull, gotBatch := m.ArenaUse()
							if gotFull != full || gotBatch != batch {
								return fmt.Errorf("arenas (full, batch) %+v, %+v; plan %+v, %+v", gotFull, gotBatch, full, batch)
							}
							if f, b := m.ArenaBytes(); f != full.Bytes() || b != batch.Bytes() {
								return fmt.Errorf("ArenaBytes %d, %d; want %d, %d", f, b, full.Bytes(), batch.Bytes())
							}
							return nil
						})
					})
				}
			}
		}
	}
}
