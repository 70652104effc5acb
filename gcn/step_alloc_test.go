//go:build cgo && !noblas

package gcn

import (
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/permute"
)

// allocConfigs are the models whose steady-state steps must not allocate:
// plain GCN and ScaleGNN's (input projection, RMSNorm, residual, output
// head). On one rank the residual's redistribution is a row permutation
// on the device.
func allocConfigs() map[string]Config {
	return map[string]Config{"kipf": testConfigs["kipf"], "scalegnn": testConfigs["scalegnn"]}
}

// The CPU device's GEMM is CBLAS's; under -tags noblas it is gonum's,
// which starts goroutines, so these tests need a BLAS. Only one-rank
// grids are tested: on more ranks the collectives allocate
// (collectives.Local's AllReduceF32 makes 7 allocations a call, MPI's
// nonblocking requests are heap objects, grid.Redistribute builds a send
// plan every call), though the model's own passes still do not.

// TestSteadyStepAllocatesNothing: on the CPU device and a one-rank grid, a
// full-graph training step (forward, loss, backward, all-reduces,
// optimizer) and an evaluation make no heap allocation once the model's
// arena has grown.
func TestSteadyStepAllocatesNothing(t *testing.T) {
	p := newProblem(29, 3000, 11, 5, 9)
	for name, cfg := range allocConfigs() {
		perms := permute.New(p.n, permute.Double, 7)
		orders := NewOrders(p.n, perms.P1, perms.P2)
		runLocal(t, 1, func(w collectives.Comm) error {
			g, err := grid.New(w, xyz(1, 1, 1))
			if err != nil {
				return err
			}
			m, err := Build(g, device.NewCPU(2), cfg, DefaultOptimizer(), p.g, orders, Options{Overlap: true})
			if err != nil {
				return err
			}
			step := 0
			train := func() {
				if _, err := m.TrainStep(step); err != nil {
					t.Error(err)
				}
				step++
			}
			eval := func() {
				if _, err := m.Evaluate(); err != nil {
					t.Error(err)
				}
			}
			for range 3 {
				train()
				eval()
			}
			if a := testing.AllocsPerRun(10, train); a != 0 {
				t.Errorf("%s: a full-graph training step allocates %v times, want 0", name, a)
			}
			if a := testing.AllocsPerRun(10, eval); a != 0 {
				t.Errorf("%s: an evaluation allocates %v times, want 0", name, a)
			}
			return nil
		})
	}
}

// TestSteadyBatchStepAllocatesNothing: the mini-batch loop — build a batch
// into recycled storage, Use it, train a step — makes no heap allocation
// once the batches and the model's batch arena have grown to the largest
// batch of the cycle.
func TestSteadyBatchStepAllocatesNothing(t *testing.T) {
	p := newProblem(31, 3000, 11, 5, 9)
	const seed, b, cycle = 3, 1500, 6
	for name, cfg := range allocConfigs() {
		perms := permute.New(p.n, permute.Double, 7)
		orders := NewOrders(p.n, perms.P1, perms.P2)
		runLocal(t, 1, func(w collectives.Comm) error {
			g, err := grid.New(w, xyz(1, 1, 1))
			if err != nil {
				return err
			}
			m, err := Build(g, device.NewCPU(2), cfg, DefaultOptimizer(), p.g, orders, Options{Overlap: true})
			if err != nil {
				return err
			}
			bb, err := NewBatchBuilder(g, cfg, m.Shards(), seed, b)
			if err != nil {
				return err
			}
			sh := bb.NewBatch()
			step := 0
			loop := func() {
				if err := bb.BuildInto(step%cycle, sh); err != nil {
					t.Error(err)
				}
				m.Use(sh)
				if _, err := m.TrainStep(step); err != nil {
					t.Error(err)
				}
				step++
			}
			for range 2 * cycle {
				loop()
			}
			if a := testing.AllocsPerRun(2*cycle, loop); a != 0 {
				t.Errorf("%s: a mini-batch step (BuildInto, Use, TrainStep) allocates %v times, want 0", name, a)
			}
			// Evaluation on the full graph in between leaves the batch
			// arena as it was.
			if _, err := m.Evaluate(); err != nil {
				return err
			}
			if a := testing.AllocsPerRun(cycle, loop); a != 0 {
				t.Errorf("%s: after an evaluation, a mini-batch step allocates %v times, want 0", name, a)
			}
			return nil
		})
	}
}
