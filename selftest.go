package main

import (
	"fmt"
	"io"

	"scalegnn/collectives"
	"scalegnn/collectives/mpi"
	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/spmm/cpu"
)

// runSelftest checks the installation end to end over MPI_COMM_WORLD: the
// collectives conformance suite, then a few training steps of the model on
// every ordered factorisation Gx·Gy·Gz of the world size, each compared
// rank by rank with the serial float64 reference.
func runSelftest(stderr io.Writer) int {
	world, err := mpi.Init()
	if err != nil {
		fmt.Fprintf(stderr, "scalegnn: %v\n", err)
		return 1
	}
	err = collectives.Conformance(world)
	if agreeFailed(world, err, stderr) {
		return finalize(1, stderr)
	}
	if world.Rank() == 0 {
		fmt.Fprintf(stderr, "collectives conformance: ok on %d ranks\n", world.Size())
	}
	checked, err := selftestModel(world)
	if agreeFailed(world, err, stderr) {
		return finalize(1, stderr)
	}
	if world.Rank() == 0 {
		fmt.Fprintf(stderr, "model vs serial reference: ok on %d grids of %d ranks (%v)\n", len(checked), world.Size(), checked)
	}
	return finalize(0, stderr)
}

// Tolerances as in gcn's tests: float32 against float64, relative to the
// largest entry.
const (
	selftestLossTol = 1e-5
	selftestTol     = 1e-4
)

func selftestModel(world collectives.Comm) ([]string, error) {
	src, err := dataset.SBM(dataset.SBMConfig{N: 61, Classes: 5, AvgDegree: 6, Homophily: 0.7, Features: 13,
		NoiseStd: 1, TrainFrac: 0.4, ValFrac: 0.2, TestFrac: 0.3, Seed: 3})
	if err != nil {
		return nil, err
	}
	g := &gcn.Graph{Adj: dataset.NormalizeGCN(src.Adj), Features: src.Features, Labels: src.Labels,
		Train: src.Train, Val: src.Val, Test: src.Test}
	configs := []struct {
		cfg    gcn.Config
		scheme permute.Scheme
	}{
		{gcn.Config{Features: 13, Hidden: 6, Classes: 5, Layers: 2, Dropout: 0.5, Seed: 1}, permute.None},
		{gcn.Config{Features: 13, Hidden: 7, Classes: 5, Layers: 3, Dropout: 0.3, InputProjection: true,
			OutputHead: true, Norm: true, Residual: true, Seed: 2}, permute.Double},
	}
	var checked []string
	for _, s := range factorisations(world.Size()) {
		for _, c := range configs {
			if err := selftestGrid(world, s, c.cfg, c.scheme, g); err != nil {
				return nil, fmt.Errorf("grid %v, permutation %v: %w", s, c.scheme, err)
			}
		}
		checked = append(checked, fmt.Sprintf("%dx%dx%d", s.X, s.Y, s.Z))
	}
	return checked, nil
}

func selftestGrid(world collectives.Comm, s grid.Shape, cfg gcn.Config, scheme permute.Scheme, gr *gcn.Graph) error {
	g, err := grid.New(world, s)
	if err != nil {
		return err
	}
	perms := permute.New(gr.Adj.Rows, scheme, 5)
	opt := gcn.DefaultOptimizer()
	m, err := gcn.Build(g, cpu.New(1), cfg, opt, gr, gcn.NewOrders(gr.Adj.Rows, perms.P1, perms.P2))
	if err != nil {
		return err
	}
	ref := gcn.NewReference(cfg, opt, gr.Adj, gr.Features, gr.Labels, gr.Train)
	for step := 0; step < 3; step++ {
		loss, err := m.ForwardBackward(step)
		if err != nil {
			return err
		}
		want := ref.LossAndGrad(step)
		if d := loss - want; d > selftestLossTol*max(1, want) || -d > selftestLossTol*max(1, want) {
			return fmt.Errorf("step %d: loss %.9g, serial reference %.9g", step, loss, want)
		}
		if _, gerr, err := m.CompareReference(ref); err != nil || gerr > selftestTol {
			return fmt.Errorf("step %d: gradient relative error %.3g > %g (%v)", step, gerr, selftestTol, err)
		}
		m.Step()
		ref.Step()
		if werr, _, err := m.CompareReference(ref); err != nil || werr > selftestTol {
			return fmt.Errorf("step %d: weight relative error %.3g > %g (%v)", step, werr, selftestTol, err)
		}
	}
	return nil
}

// factorisations lists every ordered Gx·Gy·Gz = n with Gd = 1.
func factorisations(n int) []grid.Shape {
	var out []grid.Shape
	for x := 1; x <= n; x++ {
		for y := 1; x*y <= n; y++ {
			if n%(x*y) == 0 {
				out = append(out, grid.Shape{D: 1, X: x, Y: y, Z: n / (x * y)})
			}
		}
	}
	return out
}
