//go:build cgo && !noblas

package cagnet

import (
	"math"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/internal/alloctest"
	"scalegnn/permute"
)

// TestMiniBatchSteadyStepAllocatesNothing: on the CPU device, a steady
// 1.5D mini-batch step — sampling (prefetched in a goroutine or not),
// extracting the batch's blocks, the
// staged forward and backward pass, the replicas' gradient all-reduce and
// the optimizer — makes no heap allocation, on one rank and on 2 replicas
// of 2 ranks (c = 2, bfloat16 stages too), GCN, SAGE and GAT, counted over the whole process
// with the ranks in lockstep (alloctest.Meter), after warm-up steps and
// an evaluation have grown every buffer. It failed while the model's
// buffers were reallocated whenever a batch's rows differed from the
// last's.
func TestMiniBatchSteadyStepAllocatesNothing(t *testing.T) {
	for _, tc := range []struct {
		d, p, c        int
		layer          gcn.Layer
		bf16, prefetch bool
	}{
		{1, 1, 1, gcn.GCNLayer, false, false},
		{1, 1, 1, gcn.SAGELayer, false, true},
		{2, 2, 2, gcn.GCNLayer, false, true},
		{2, 2, 2, gcn.SAGELayer, true, false},
		{1, 1, 1, gcn.GATLayer, false, true},
		{2, 2, 2, gcn.GATLayer, true, false},
		{1, 4, 2, gcn.GATLayer, true, true},
	} {
		cfg := gcn.Config{Features: 16, Hidden: 32, Classes: 4, Layers: 3, Seed: 1, Dropout: 0.5, Layer: tc.layer}
		if tc.layer == gcn.GATLayer {
			cfg.Hidden, cfg.Heads, cfg.OutputHeads = 8, 4, 2
		}
		g := gcn.RandomGraph(3, 1500, cfg.Features, cfg.Classes, 8)
		order := permute.New(g.Adj.Rows, permute.Single, 2).P1
		ranks, runs := tc.d*tc.p, 10
		meter := alloctest.NewMeter(ranks)
		mallocs := uint64(math.MaxUint64)
		errs := collectives.RunLocal(ranks, func(w collectives.Comm) error {
			gr, err := grid.New(w, grid.Shape{D: tc.d, X: tc.p, Y: 1, Z: 1})
			if err != nil {
				return err
			}
			src, err := gcn.NewMemorySource(g, gcn.NewOrders(g.Adj.Rows, order, nil))
			if err != nil {
				return err
			}
			m, err := NewMiniBatch(gr.Cube, device.NewCPU(1), Options{Replication: tc.c, BF16: tc.bf16},
				BatchOptions{Size: 300, Seed: 4, DP: gr.DP, Prefetch: tc.prefetch}, cfg, gcn.DefaultOptimizer(), src)
			if err != nil {
				return err
			}
			defer m.Close()
			step := 0
			train := func() error {
				if _, err := m.LossAndGrad(step); err != nil {
					return err
				}
				m.Step()
				step++
				return nil
			}
			for range 8 { // grow the extracted blocks to a large batch's
				if err := train(); err != nil {
					return err
				}
			}
			if _, err := m.Accuracy(); err != nil {
				return err
			}
			meter.GC()
			// The fewest over up to 6 windows, as the full-graph test.
			for range 6 {
				meter.Start()
				for range runs {
					if err := train(); err != nil {
						return err
					}
				}
				meter.Stop()
				n := meter.Mallocs()
				if w.Rank() == 0 {
					mallocs = min(mallocs, n)
				}
				if n == 0 {
					break
				}
			}
			return nil
		})
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if mallocs != 0 {
			t.Errorf("d=%d P=%d c=%d %v bf16=%v prefetch=%v: %d heap allocations in the best window of %d mini-batch steps, want 0",
				tc.d, tc.p, tc.c, tc.layer, tc.bf16, tc.prefetch, mallocs, runs)
		}
	}
}
