//go:build cgo && !noblas

package cagnet

import (
	"math"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/internal/alloctest"
	"scalegnn/permute"
)

// TestSteadyStepAllocatesNothing: on the CPU device and one rank
// (TestStagedBF16AggregationAllocatesNothing below runs the staged
// broadcasts on 4), a steady-state
// aggregation makes no heap allocation (its stage buffers and requests are
// reused), nor does a whole training step, GCN, SAGE or GAT (forward, host
// loss, backward, host optimizer), in float32 and in mixed precision. The CPU
// device's GEMM is CBLAS's here; gonum's (noblas) starts goroutines.
func TestSteadyStepAllocatesNothing(t *testing.T) {
	for _, prec := range []device.Precision{device.Float32, device.BF16} {
		testSteadyStep(t, prec)
	}
}

// testSteadyStep is TestSteadyStepAllocatesNothing in one precision of the
// products (train.precision).
func testSteadyStep(t *testing.T, prec device.Precision) {
	for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer, gcn.GATLayer} {
		cfg := gcn.Config{Features: 16, Hidden: 32, Classes: 4, Layers: 3, Seed: 1, Dropout: 0.5, Layer: layer}
		if layer == gcn.GATLayer {
			cfg.Hidden, cfg.Heads, cfg.OutputHeads = 8, 4, 2
		}
		g := gcn.RandomGraph(3, 2000, cfg.Features, cfg.Classes, 8)
		errs := collectives.RunLocal(1, func(w collectives.Comm) error {
			m, err := New(w, device.WithPrecision(device.NewCPU(1), prec), Options{Replication: 1, Permutation: permute.Single, PermSeed: 2}, cfg, gcn.DefaultOptimizer(), g)
			if err != nil {
				return err
			}
			for range 2 {
				if _, err := m.LossAndGrad(); err != nil {
					return err
				}
				m.Step()
			}
			h := operand{f: m.x} // the features, in the precision the model holds them in
			if m.featB {
				h = operand{b: m.xb, isB: true}
			}
			dst := m.buf("alloc.test", 0, m.hi-m.lo, cfg.Features)
			if n := testing.AllocsPerRun(5, func() {
				if err := m.aggregate(dst, m.a, h); err != nil {
					t.Error(err)
				}
			}); n != 0 {
				t.Errorf("%v %v: %g heap allocations per aggregation, want 0", layer, prec, n)
			}
			if n := testing.AllocsPerRun(5, func() {
				if _, err := m.LossAndGrad(); err != nil {
					t.Error(err)
				}
				m.Step()
			}); n != 0 {
				t.Errorf("%v %v: %g heap allocations per training step, want 0", layer, prec, n)
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

// TestStagedBF16AggregationAllocatesNothing: on 4 ranks as 2×2 with
// bfloat16 broadcasts (two in flight at once, each with its host staging
// kept by the model), a steady aggregation allocates nothing on any rank,
// of a float32 operand packed for the broadcast (train.comm_dtype) and of
// a bfloat16 one sent as it is (mixed precision); the ranks run it in
// lockstep (alloctest.Meter), counting the whole process. It failed while
// each broadcast made its host slice.
func TestStagedBF16AggregationAllocatesNothing(t *testing.T) {
	for _, b := range []bool{false, true} {
		testStagedAggregationAllocs(t, b)
	}
}

// testStagedAggregationAllocs is TestStagedBF16AggregationAllocatesNothing
// with a bfloat16 operand when b.
func testStagedAggregationAllocs(t *testing.T, b bool) {
	cfg := gcn.Config{Features: 16, Hidden: 32, Classes: 4, Layers: 2, Seed: 1}
	g := gcn.RandomGraph(5, 1200, cfg.Features, cfg.Classes, 8)
	const ranks, runs = 4, 20
	meter := alloctest.NewMeter(ranks)
	mallocs := uint64(math.MaxUint64)
	errs := collectives.RunLocal(ranks, func(w collectives.Comm) error {
		m, err := New(w, device.NewCPU(1), Options{Replication: 2, Permutation: permute.Single, PermSeed: 2, BF16: true}, cfg, gcn.DefaultOptimizer(), g)
		if err != nil {
			return err
		}
		h := operand{f: m.x}
		if b {
			h = operand{b: m.bufBF16("alloc.test.b", 0, m.x.Rows(), m.x.Cols()), isB: true}
			m.dev.PackMatBF16(h.b, m.x)
		}
		dst := m.buf("alloc.test", 0, m.x.Rows(), m.x.Cols())
		for range 4 { // grow every buffer
			if err := m.aggregate(dst, m.a, h); err != nil {
				return err
			}
		}
		meter.GC()
		// The fewest over up to 6 windows: the runtime's pools may refill
		// in the first (gcn/step_alloc_test.go, steadyAllocs, says why);
		// an allocation the stages make shows in every one.
		for range 6 {
			meter.Start()
			for range runs {
				if err := m.aggregate(dst, m.a, h); err != nil {
					return err
				}
			}
			meter.Stop()
			n := meter.Mallocs() // the same on every rank
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
		t.Errorf("bfloat16 operand %v: %d heap allocations in the best window of %d staged bfloat16 aggregations on %d ranks, want 0", b, mallocs, runs, ranks)
	}
}
