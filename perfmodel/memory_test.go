package perfmodel

import (
	"fmt"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
)

// arenaConfigs cover what changes the arenas: dropout on a first layer
// without an input gradient (kipf), norm and head (deep), projection,
// residual, norm and head (scalegnn), and projection with residual but
// without dropout, norm or head (plain), and plain GCN layers without
// dropout (gcn3: in mixed precision, hidden outputs in bfloat16 only and
// on one rank no staging at all) and with (gcn3drop: the outputs are the
// next layer's input after dropout, dF̃ masked in the SpMM).
var arenaConfigs = map[string]gcn.Config{
	"kipf":     volumeConfigs["kipf"],
	"deep":     volumeConfigs["deep"],
	"scalegnn": volumeConfigs["scalegnn"],
	"plain":    {Features: 11, Hidden: 6, Classes: 5, Layers: 3, InputProjection: true, Residual: true, Seed: 6},
	"gcn3":     {Features: 11, Hidden: 6, Classes: 5, Layers: 3, Seed: 6},
	"gcn3drop": {Features: 11, Hidden: 6, Classes: 5, Layers: 3, Dropout: 0.3, Seed: 6},
	"sage":     volumeConfigs["sage"],
	"sagefull": volumeConfigs["sagefull"],
	"gat":      gatVolumeConfigs["gat"],
	"gatfull":  gatVolumeConfigs["gatfull"],
}

// TestArenaMatchesModel runs real models in process — full-graph on grids
// including non-power-of-two ones, float32 and bfloat16 3D-PMM sums — for
// two training steps and an evaluation, and requires the memory model's
// arena of every rank to equal, in bytes, the capacity of the model's
// full-graph arena (EstimateMemory's Activations, the batch arena being
// empty). With bfloat16 sums the model also runs in mixed precision
// (device.BF16Products), and EstimateMemory's Staging must be the
// device's staging, exactly.
func TestArenaMatchesModel(t *testing.T) {
	g := smallGraph(1, 41, 11, 5, 5)
	shapes := []grid.Shape{xyz(1, 1, 1), xyz(2, 2, 2), xyz(1, 2, 3), xyz(3, 1, 2), xyz(2, 3, 1), xyz(1, 5, 1), xyz(3, 3, 1)}
	for _, name := range []string{"kipf", "deep", "scalegnn", "plain", "gcn3", "gcn3drop", "sage", "sagefull"} {
		cfg := arenaConfigs[name]
		perms := permute.New(g.Adj.Rows, permute.Double, 11)
		orders := gcn.NewOrders(g.Adj.Rows, perms.P1, perms.P2)
		for _, bf16 := range []bool{false, true} {
			job := jobFor(cfg, g, permute.Double)
			if bf16 {
				job.CommDType, job.Precision = collectives.BF16, device.BF16
			}
			for _, shape := range shapes {
				t.Run(fmt.Sprintf("%s/bf16=%v/%s", name, bf16, GridString(shape)), func(t *testing.T) {
					errs := collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
						gr, err := grid.New(w, shape)
						if err != nil {
							return err
						}
						dev := device.WithPrecision(device.NewNative(1), job.Precision)
						// As jobs builds a model: in mixed precision its
						// features in bfloat16.
						src, err := gcn.NewMemorySource(g, orders)
						if err != nil {
							return err
						}
						sh, err := gcn.NewShards(gr, cfg, src)
						if err != nil {
							return err
						}
						if bf16 {
							sh.FeaturesToBF16(gr, cfg)
						}
						m, err := gcn.NewModel(gr, dev, cfg, gcn.DefaultOptimizer(), sh, gcn.Options{BF16: bf16, Overlap: true})
						if err != nil {
							return err
						}
						for step := range 2 {
							if _, err := m.TrainStep(step); err != nil {
								return err
							}
						}
						if _, err := m.Evaluate(); err != nil {
							return err
						}
						full, batch := m.ArenaBytes()
						if batch != 0 {
							return fmt.Errorf("full-graph training: batch arena %d bytes, want 0", batch)
						}
						at := CoordsOf(shape, w.Rank())
						if got, want := EstimateMemory(job, shape, at).Staging, device.StagingBytes(dev); got != want {
							return fmt.Errorf("predicted staging %d bytes, the device's %d", got, want)
						}
						// A prediction keeps the plan's staging, 0 included,
						// rather than StagingBound's.
						if got, want := job.StagingBound(EstimateMemory(job, shape, at)).Staging, device.StagingBytes(dev); got != want {
							return fmt.Errorf("staging %d bytes after StagingBound, the device's %d", got, want)
						}
						if got := EstimateMemory(job, shape, at).Activations; got != full {
							fu, _ := m.ArenaUse()
							pf, _ := arenas(job, newTracer(job, shape, at, Local{}, false), []*tracer{newTracer(job, shape, at, Local{}, true)})
							return fmt.Errorf("predicted arena %d bytes %+v, model's %d bytes %+v", got, pf, full, fu)
						}
						return nil
					})
					for r, err := range errs {
						if err != nil {
							t.Fatalf("rank %d: %v", r, err)
						}
					}
				})
			}
		}
	}
}

// TestMiniBatchArenaMatchesModel: mini-batch training on 4D grids (Gd > 1,
// non-power-of-two shapes), float32 and bfloat16 sums; after three steps
// on batches of different block shapes (the arena grows to the largest
// need plus a quarter, as the memory model's plan with each sample's exact
// row counts says) and an evaluation, both arenas of every rank equal the
// prediction by pool, exactly.
func TestMiniBatchArenaMatchesModel(t *testing.T) {
	g := smallGraph(2, 47, 11, 5, 6)
	n := g.Adj.Rows
	const seed, batch, steps = 9, 19, 3
	shapes := []grid.Shape{{D: 1, X: 1, Y: 1, Z: 1}, {D: 2, X: 2, Y: 1, Z: 2}, {D: 2, X: 1, Y: 3, Z: 1}, {D: 3, X: 1, Y: 1, Z: 2}, {D: 1, X: 2, Y: 2, Z: 2}}
	for _, name := range []string{"kipf", "deep", "scalegnn", "plain", "sage", "sagefull"} {
		cfg := arenaConfigs[name]
		perms := permute.New(n, permute.Double, 11)
		orders := gcn.NewOrders(n, perms.P1, perms.P2)
		for _, bf16 := range []bool{false, true} {
			job := jobFor(cfg, g, permute.Double)
			job.Mode, job.BatchSize = gcn.MiniBatch, batch
			if bf16 {
				job.CommDType = collectives.BF16
			}
			for _, shape := range shapes {
				t.Run(fmt.Sprintf("%s/bf16=%v/%s", name, bf16, GridString(shape)), func(t *testing.T) {
					errs := collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
						gr, err := grid.New(w, shape)
						if err != nil {
							return err
						}
						m, err := gcn.Build(gr, device.NewNative(1), cfg, gcn.DefaultOptimizer(), g, orders, gcn.Options{BF16: bf16, Overlap: true})
						if err != nil {
							return err
						}
						bb, err := gcn.NewBatchBuilder(gr, cfg, m.Shards(), seed, batch)
						if err != nil {
							return err
						}
						at := CoordsOf(shape, w.Rank())
						var tracers []*tracer
						for step := range steps {
							sh, err := bb.Build(step)
							if err != nil {
								return err
							}
							m.Use(sh)
							if _, err := m.TrainStep(step); err != nil {
								return err
							}
							tracers = append(tracers, newTracer(job, shape, at, sampleLocal(n, perms, seed, at.D, step, batch), true))
						}
						if _, err := m.Evaluate(); err != nil {
							return err
						}
						gotFull, gotBatch := m.ArenaUse()
						wantFull, wantBatch := arenas(job, newTracer(job, shape, at, Local{}, false), tracers)
						if gotFull != wantFull || gotBatch != wantBatch {
							return fmt.Errorf("arenas (full, batch): model's %+v, %+v; predicted %+v, %+v", gotFull, gotBatch, wantFull, wantBatch)
						}
						return nil
					})
					for r, err := range errs {
						if err != nil {
							t.Fatalf("rank %d: %v", r, err)
						}
					}
				})
			}
		}
	}
}

// TestArenaGrowth: the growth rule, pool by pool, against hand-worked
// sequences.
func TestArenaGrowth(t *testing.T) {
	for _, c := range []struct {
		passes []gcn.ArenaUse
		want   gcn.ArenaUse
	}{
		{nil, gcn.ArenaUse{}},
		{[]gcn.ArenaUse{{F32: 100, U64: 7, U16: 0, I64: 3}}, gcn.ArenaUse{F32: 125, U64: 8, U16: 0, I64: 3}},
		// Within the quarter: no growth.
		{[]gcn.ArenaUse{{F32: 100}, {F32: 125}}, gcn.ArenaUse{F32: 125}},
		// Beyond it: the larger pass plus its quarter.
		{[]gcn.ArenaUse{{F32: 100}, {F32: 126}}, gcn.ArenaUse{F32: 157}},
		// Smaller first, larger later, pools independent.
		{[]gcn.ArenaUse{{F32: 10, I64: 40}, {F32: 40, I64: 10}}, gcn.ArenaUse{F32: 50, I64: 50}},
	} {
		var got gcn.ArenaUse
		for _, p := range c.passes {
			got = got.After(p)
		}
		if got != c.want {
			t.Errorf("passes %+v: got %+v, want %+v", c.passes, got, c.want)
		}
		if got.Bytes() != 4*got.F32+8*got.U64+2*got.U16+8*got.I64 {
			t.Errorf("%+v: Bytes %d", got, got.Bytes())
		}
	}
}
