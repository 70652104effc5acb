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

// With bfloat16 communication (8 significant bits) only the first step's
// loss and gradients are compared, as gcn's conformance does: Adam's first
// update is nearly sign(gradient), so a gradient entry near zero that the
// rounding flips moves its weight by 2·lr and later steps drift from the
// float64 reference for that reason alone. The loss is held to
// BF16LossTol absolutely, a gradient to BF16GradTol times its largest
// reference entry: the broadcast operands and partial sums carry a
// relative error of 2^-9 each, a few of which add up per entry.
const (
	BF16LossTol = 1e-2
	BF16GradTol = 3e-2
)

// Case is one configuration CheckCase trains.
type Case struct {
	// C is the replication; the world size is P.
	C       int
	Scheme  permute.Scheme
	Dropout float64
	Layer   gcn.Layer
	BF16    bool
}

func (c Case) String() string {
	s := fmt.Sprintf("c=%d permutation %v dropout %g layer %v", c.C, c.Scheme, c.Dropout, c.Layer)
	if c.BF16 {
		s += " bf16"
	}
	return s
}

// conformanceModel is a 3-layer model on a 41-vertex random graph (41 is
// a prime: no block count divides it).
func conformanceModel(c Case) (gcn.Config, gcn.Optimizer, *gcn.Graph) {
	cfg := gcn.Config{Features: 7, Hidden: 5, Classes: 3, Layers: 3, Seed: 11, Dropout: c.Dropout, Layer: c.Layer}
	return cfg, gcn.DefaultOptimizer(), gcn.RandomGraph(5, 41, cfg.Features, cfg.Classes, 4)
}

// CheckCase trains 3 steps of 1.5D on world and holds losses and
// gradients of every step and the weights after them to the serial
// float64 reference (collective over world); with BF16, the first step's
// loss and gradients (see BF16GradTol).
func CheckCase(world collectives.Comm, dev device.Device, c Case) error {
	cfg, opt, g := conformanceModel(c)
	adj := g.Adj
	if c.Layer == gcn.SAGELayer {
		adj = gcn.MeanAdjacency(adj)
	}
	ref := gcn.NewReference(cfg, opt, adj, g.Features, g.Labels, g.Train)
	m, err := New(world, dev, Options{Replication: c.C, Permutation: c.Scheme, PermSeed: 3, BF16: c.BF16}, cfg, opt, g)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("cagnet 1.5d P=%d %v rank %d", world.Size(), c, world.Rank())
	check := func(what string, got, want []float64) error {
		for k := range want {
			if d := math.Abs(got[k] - want[k]); !(d <= ConformanceTol*(1+math.Abs(want[k]))) {
				return fmt.Errorf("%s: %s entry %d = %v, reference %v (tolerance %g)", name, what, k, got[k], want[k], ConformanceTol)
			}
		}
		return nil
	}
	if c.BF16 {
		return checkBF16(name, m, ref)
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

// checkBF16 compares the first step's loss and gradients within the
// bfloat16 tolerances.
func checkBF16(name string, m *Model, ref *gcn.Reference) error {
	want := ref.LossAndGrad(0)
	got, err := m.LossAndGrad()
	if err != nil {
		return err
	}
	if d := math.Abs(got - want); !(d <= BF16LossTol) {
		return fmt.Errorf("%s: loss %v, reference %v (tolerance %g)", name, got, want, BF16LossTol)
	}
	for i, p := range ref.Params {
		scale := 0.0
		for _, v := range p.G {
			scale = math.Max(scale, math.Abs(v))
		}
		for k, w := range p.G {
			if d := math.Abs(m.Params[i].G[k] - w); !(d <= BF16GradTol*scale) {
				return fmt.Errorf("%s: gradient of %s entry %d = %v, reference %v (tolerance %g of the largest entry %g)",
					name, p.Name, k, m.Params[i].G[k], w, BF16GradTol, scale)
			}
		}
	}
	return nil
}

// Cases lists what Conformance runs on P ranks: every replication c
// dividing P, without and with single permutation and dropout, with GCN
// and SAGE layers, and each c once more with bfloat16 communication.
func Cases(p int) []Case {
	var out []Case
	for c := 1; c <= p; c++ {
		if p%c != 0 {
			continue
		}
		for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer} {
			for _, s := range []permute.Scheme{permute.None, permute.Single} {
				for _, d := range []float64{0, 0.5} {
					out = append(out, Case{C: c, Scheme: s, Dropout: d, Layer: layer})
				}
			}
		}
		out = append(out, Case{C: c, Scheme: permute.Single, Dropout: 0.5, Layer: gcn.SAGELayer, BF16: true},
			Case{C: c, Scheme: permute.None, Layer: gcn.GCNLayer, BF16: true})
	}
	return out
}

// Conformance runs CheckCase for every case of Cases and returns this
// rank's failures (scalegnn selftest runs it over MPI).
func Conformance(world collectives.Comm, dev device.Device) []error {
	var errs []error
	for _, c := range Cases(world.Size()) {
		if err := CheckCase(world, dev, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
