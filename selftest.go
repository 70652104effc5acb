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
	checked, err = selftestMiniBatch(world)
	if agreeFailed(world, err, stderr) {
		return finalize(1, stderr)
	}
	if world.Rank() == 0 {
		fmt.Fprintf(stderr, "data-parallel mini-batches vs serial reference (float32, and bf16 where x*y*z > 1): ok on %d grids of %d ranks (%v)\n", len(checked), world.Size(), checked)
	}
	return finalize(0, stderr)
}

// Tolerances as in gcn's tests: float32 against float64, relative to the
// largest entry.
const (
	selftestLossTol = 1e-5
	selftestTol     = 1e-4
)

// selftestConfig is a model and permutation the self-test trains.
type selftestConfig struct {
	cfg    gcn.Config
	scheme permute.Scheme
}

// selftestProblem is the self-test's graph: a small SBM graph whose sizes
// no grid axis divides evenly, and two models, a plain GCN and one with
// every layer option, with and without double permutation.
func selftestProblem() (*gcn.Graph, []selftestConfig, error) {
	src, err := dataset.SBM(dataset.SBMConfig{N: 61, Classes: 5, AvgDegree: 6, Homophily: 0.7, Features: 13,
		NoiseStd: 1, TrainFrac: 0.4, ValFrac: 0.2, TestFrac: 0.3, Seed: 3})
	if err != nil {
		return nil, nil, err
	}
	g := &gcn.Graph{Adj: dataset.NormalizeGCN(src.Adj), Features: src.Features, Labels: src.Labels,
		Train: src.Train, Val: src.Val, Test: src.Test}
	return g, []selftestConfig{
		{gcn.Config{Features: 13, Hidden: 6, Classes: 5, Layers: 2, Dropout: 0.5, Seed: 1}, permute.None},
		{gcn.Config{Features: 13, Hidden: 7, Classes: 5, Layers: 3, Dropout: 0.3, InputProjection: true,
			OutputHead: true, Norm: true, Residual: true, Seed: 2}, permute.Double},
	}, nil
}

func selftestModel(world collectives.Comm) ([]string, error) {
	g, configs, err := selftestProblem()
	if err != nil {
		return nil, err
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

// selftestMiniBatch trains two mini-batch steps on every grid with Gd > 1
// replicas (with overlap on, so the nonblocking path runs over MPI too):
// each replica's loss must be the serial loss of its own batch, the
// gradient every rank holds the mean of the replicas' serial gradients,
// and the weights the serial optimizer step with that mean.
func selftestMiniBatch(world collectives.Comm) ([]string, error) {
	gr, configs, err := selftestProblem()
	if err != nil {
		return nil, err
	}
	const b, seed = 23, 9
	var checked []string
	for d := 2; d <= world.Size(); d++ {
		if world.Size()%d != 0 {
			continue
		}
		for _, s := range factorisations(world.Size() / d) {
			s.D = d
			for _, c := range configs {
				if err := selftestBatches(world, s, c, gr, b, seed, false); err != nil {
					return nil, fmt.Errorf("grid %v, permutation %v: %w", s, c.scheme, err)
				}
			}
			// bfloat16 3D-PMM sums, where the replica has a 3D grid to
			// sum over, for the model with every layer option.
			if s.X*s.Y*s.Z > 1 {
				if err := selftestBatches(world, s, configs[len(configs)-1], gr, b, seed, true); err != nil {
					return nil, fmt.Errorf("grid %v with bf16 communication: %w", s, err)
				}
			}
			checked = append(checked, s.String())
		}
	}
	return checked, nil
}

// Tolerances with bfloat16 sums: each sum is rounded to 8 significant bits
// (relative error 2⁻⁹ ≈ 0.2%), a few times per layer; a wrong block is off
// by O(1). Only the first step's loss and gradient are compared: Adam's
// first update is nearly sign(gradient), so a gradient entry near zero that
// bfloat16 rounding flips moves its weight by 2·lr, and later steps diverge
// from the float64 reference for that reason alone.
const (
	selftestBF16LossTol = 1e-2
	selftestBF16Tol     = 5e-2
)

func selftestBatches(world collectives.Comm, s grid.Shape, c selftestConfig, gr *gcn.Graph, b int, seed uint64, bf16 bool) error {
	lossTol, tol := selftestLossTol, selftestTol
	if bf16 {
		lossTol, tol = selftestBF16LossTol, selftestBF16Tol
	}
	g, err := grid.New(world, s)
	if err != nil {
		return err
	}
	perms := permute.New(gr.Adj.Rows, c.scheme, 5)
	opt := gcn.DefaultOptimizer()
	m, err := gcn.Build(g, cpu.New(1), c.cfg, opt, gr, gcn.NewOrders(gr.Adj.Rows, perms.P1, perms.P2))
	if err != nil {
		return err
	}
	m.Options = gcn.Options{Overlap: true, BF16: bf16}
	bb, err := gcn.NewBatchBuilder(g, c.cfg, m.Shards(), seed, b)
	if err != nil {
		return err
	}
	mean := gcn.NewReference(c.cfg, opt, gr.Adj, gr.Features, gr.Labels, gr.Train)
	steps := 2
	if bf16 {
		steps = 1
	}
	for step := 0; step < steps; step++ {
		sh, err := bb.Build(step)
		if err != nil {
			return err
		}
		m.Use(sh)
		loss, err := m.ForwardBackward(step)
		if err != nil {
			return err
		}
		// The serial batches, each from the current weights; the mean of
		// their gradients goes into mean.
		for _, p := range mean.Params {
			clear(p.G)
		}
		for rep := 0; rep < s.D; rep++ {
			verts, sub := gcn.SerialBatch(gr, seed, rep, step, b)
			r := gcn.NewReference(c.cfg, opt, sub.Adj, sub.Features, sub.Labels, sub.Train)
			r.Verts = verts
			for k, p := range r.Params {
				copy(p.W, mean.Params[k].W)
			}
			want := r.LossAndGrad(step)
			if d := loss - want; rep == g.CD && (d > lossTol*max(1, want) || -d > lossTol*max(1, want)) {
				return fmt.Errorf("step %d replica %d: loss %.9g, serial %.9g", step, rep, loss, want)
			}
			for k, p := range r.Params {
				for i, v := range p.G {
					mean.Params[k].G[i] += v / float64(s.D)
				}
			}
		}
		if _, gerr, err := m.CompareReference(mean); err != nil || gerr > tol {
			return fmt.Errorf("step %d: gradient relative error %.3g > %g (%v)", step, gerr, tol, err)
		}
		if bf16 {
			break
		}
		m.Step()
		mean.Step()
		if werr, _, err := m.CompareReference(mean); err != nil || werr > tol {
			return fmt.Errorf("step %d: weight relative error %.3g > %g (%v)", step, werr, tol, err)
		}
	}
	return nil
}
