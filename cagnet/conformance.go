package cagnet

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/permute"
)

// ConformanceTol bounds |got − want| ≤ tol·(1+|want|) for gradients and
// weights and |got − want| ≤ tol for losses: float32 storage and a
// different summation order against the float64 reference.
const ConformanceTol = 2e-5

// conformanceModel is a 3-layer GCN on a 41-vertex random graph (41 is a
// prime: no block count divides it).
func conformanceModel(dropout float64) (gcn.Config, gcn.Optimizer, *gcn.Graph) {
	cfg := gcn.Config{Features: 7, Hidden: 5, Classes: 3, Layers: 3, Seed: 11, Dropout: dropout}
	return cfg, gcn.DefaultOptimizer(), gcn.RandomGraph(5, 41, cfg.Features, cfg.Classes, 4)
}

// CheckCase trains 3 steps of 1.5D with replication c on world and holds
// losses and gradients of every step and the weights after them to the
// serial float64 reference (collective over world).
func CheckCase(world collectives.Comm, dev device.Device, c int, scheme permute.Scheme, dropout float64) error {
	cfg, opt, g := conformanceModel(dropout)
	ref := gcn.NewReference(cfg, opt, g.Adj, g.Features, g.Labels, g.Train)
	m, err := New(world, dev, Options{Replication: c, Permutation: scheme, PermSeed: 3}, cfg, opt, g)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("cagnet 1.5d P=%d c=%d permutation %v dropout %g rank %d", world.Size(), c, scheme, dropout, world.Rank())
	check := func(what string, got, want []float64) error {
		for k := range want {
			if d := math.Abs(got[k] - want[k]); !(d <= ConformanceTol*(1+math.Abs(want[k]))) {
				return fmt.Errorf("%s: %s entry %d = %v, reference %v (tolerance %g)", name, what, k, got[k], want[k], ConformanceTol)
			}
		}
		return nil
	}
	for s := 0; s < 3; s++ {
		want := ref.LossAndGrad(s)
		got, err := m.LossAndGrad()
		if err != nil {
			return err
		}
		if err := check(fmt.Sprintf("step %d loss", s), []float64{got}, []float64{want}); err != nil {
			return err
		}
		for i, p := range ref.Params {
			if err := check(fmt.Sprintf("step %d gradient of %s", s, p.Name), m.Params[i].G, p.G); err != nil {
				return err
			}
		}
		ref.Step()
		m.Step()
	}
	for i, p := range ref.Params {
		if err := check("final "+p.Name, m.Params[i].W, p.W); err != nil {
			return err
		}
	}
	acc, err := m.Accuracy()
	if err != nil {
		return err
	}
	logits := ref.Forward(false, 0)
	for k, mask := range [][]bool{g.Train, g.Val, g.Test} {
		if want := ref.Accuracy(logits, mask); acc[k] != want {
			return fmt.Errorf("%s: accuracy %d (train, val, test) = %v, reference %v", name, k, acc[k], want)
		}
	}
	return nil
}

// Conformance runs CheckCase for every replication c dividing the world
// size, without and with single permutation and dropout, and returns this rank's
// failures (scalegnn selftest runs it over MPI).
func Conformance(world collectives.Comm, dev device.Device) []error {
	var errs []error
	for c := 1; c <= world.Size(); c++ {
		if world.Size()%c != 0 {
			continue
		}
		for _, s := range []permute.Scheme{permute.None, permute.Single} {
			for _, p := range []float64{0, 0.5} {
				if err := CheckCase(world, dev, c, s, p); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errs
}
