//go:build cgo && !noblas

package cagnet

import (
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/permute"
)

// TestSteadyStepAllocatesNothing: on the CPU device and one rank
// (whose collectives are no-ops: on more ranks collectives.Local and MPI
// allocate per call, see gcn/step_alloc_test.go), a steady-state
// aggregation makes no heap allocation (its stage buffers and requests are
// reused), nor does a whole training step, GCN or SAGE (forward, host
// loss, backward, host optimizer). The CPU
// device's GEMM is CBLAS's here; gonum's (noblas) starts goroutines.
func TestSteadyStepAllocatesNothing(t *testing.T) {
	for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer} {
		cfg := gcn.Config{Features: 16, Hidden: 32, Classes: 4, Layers: 3, Seed: 1, Dropout: 0.5, Layer: layer}
		g := gcn.RandomGraph(3, 2000, cfg.Features, cfg.Classes, 8)
		errs := collectives.RunLocal(1, func(w collectives.Comm) error {
			m, err := New(w, device.NewCPU(1), Options{Replication: 1, Permutation: permute.Single, PermSeed: 2}, cfg, gcn.DefaultOptimizer(), g)
			if err != nil {
				return err
			}
			for range 2 {
				if _, err := m.LossAndGrad(); err != nil {
					return err
				}
				m.Step()
			}
			h := m.x
			dst := m.buf("alloc.test", 0, h.Rows(), h.Cols())
			if n := testing.AllocsPerRun(5, func() {
				if err := m.aggregate(dst, m.a, h); err != nil {
					t.Error(err)
				}
			}); n != 0 {
				t.Errorf("%v: %g heap allocations per aggregation, want 0", layer, n)
			}
			if n := testing.AllocsPerRun(5, func() {
				if _, err := m.LossAndGrad(); err != nil {
					t.Error(err)
				}
				m.Step()
			}); n != 0 {
				t.Errorf("%v: %g heap allocations per training step, want 0", layer, n)
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
