package gcn

import (
	"math"
	"slices"
	"testing"
)

var testConfigs = map[string]Config{
	"kipf":     {Features: 11, Hidden: 6, Classes: 5, Layers: 2, Dropout: 0.5, Seed: 3},
	"deep":     {Features: 11, Hidden: 6, Classes: 5, Layers: 3, Dropout: 0.3, Seed: 4},
	"scalegnn": {Features: 11, Hidden: 7, Classes: 5, Layers: 4, Dropout: 0.3, InputProjection: true, OutputHead: true, Norm: true, Residual: true, Seed: 5},
	"onelayer": {Features: 11, Classes: 5, Layers: 1, Seed: 6},
	"headonly": {Features: 11, Hidden: 6, Classes: 5, Layers: 2, Dropout: 0.2, OutputHead: true, Norm: true, Seed: 7},
	"sage":     {Features: 11, Hidden: 6, Classes: 5, Layers: 2, Dropout: 0.5, Layer: SAGELayer, Seed: 8},
	"sagefull": {Features: 11, Hidden: 7, Classes: 5, Layers: 3, Dropout: 0.3, InputProjection: true, OutputHead: true, Norm: true, Residual: true, Layer: SAGELayer, Seed: 9},
}

// TestReferenceFiniteDifferences checks every entry of every gradient of
// the serial model against central differences of its loss. The dropout
// masks are a function of the step, so the loss is a fixed function of the
// parameters. ReLU kinks can make single entries disagree when a
// perturbation crosses zero; with h = 1e-6 that does not happen on these
// problems, and the tolerance is tight (1e-5 relative to the largest
// gradient entry).
func TestReferenceFiniteDifferences(t *testing.T) {
	p := newProblem(1, 23, 11, 5, 4)
	for name, cfg := range testConfigs {
		t.Run(name, func(t *testing.T) {
			r := p.reference(cfg, DefaultOptimizer())
			const step = 2
			fdCheck(t, r, step, 1e-5)
		})
	}
}

func TestReferenceLearns(t *testing.T) {
	p := newProblem(2, 40, 11, 3, 5)
	cfg := testConfigs["kipf"]
	cfg.Classes = 3
	cfg.Hidden = 16
	cfg.Dropout = 0
	r := p.reference(cfg, DefaultOptimizer())
	first := r.LossAndGrad(0)
	var last float64
	for s := 0; s < 100; s++ {
		last = r.LossAndGrad(s)
		r.Step()
	}
	if !(last < 0.5*first) {
		t.Fatalf("training loss went from %v to %v in 100 steps; want it at least halved", first, last)
	}
	if acc := r.Accuracy(r.Forward(false, 0), p.g.Train); acc < 0.9 {
		t.Fatalf("training accuracy %v after fitting, want >= 0.9", acc)
	}
}

// fdCheck compares every entry of every gradient of r (after
// LossAndGrad(step)) with central differences of the loss, to tol
// relative to the largest entry of each gradient (at least 1e-3).
// A ReLU (GCN, SAGE) or LeakyReLU (GAT, at s+t = 0) kink could make an
// entry disagree if a perturbation of h = 1e-6 crossed it; on these
// problems none does (ELU is C¹, and the softmax's max shift cancels).
func fdCheck(t *testing.T, r *Reference, step int, tol float64) {
	t.Helper()
	// Every gradient is copied before any perturbation: LossAndGrad at a
	// perturbed point overwrites them all.
	r.LossAndGrad(step)
	grads := make([][]float64, len(r.Params))
	for i, prm := range r.Params {
		grads[i] = slices.Clone(prm.G)
	}
	for i, prm := range r.Params {
		grad := grads[i]
		scale := 1e-3
		for _, g := range grad {
			scale = math.Max(scale, math.Abs(g))
		}
		if scale == 1e-3 && !slices.ContainsFunc(grad, func(g float64) bool { return g != 0 }) {
			t.Errorf("%s: gradient is zero everywhere (a parameter that the loss ignores?)", prm.Name)
		}
		const h = 1e-6
		for k := range prm.W {
			w := prm.W[k]
			prm.W[k] = w + h
			lp := r.LossAndGrad(step)
			prm.W[k] = w - h
			lm := r.LossAndGrad(step)
			prm.W[k] = w
			fd := (lp - lm) / (2 * h)
			if math.Abs(fd-grad[k]) > tol*scale {
				t.Errorf("%s[%d]: analytic %.9g, finite difference %.9g", prm.Name, k, grad[k], fd)
			}
		}
	}
	r.LossAndGrad(step)
}
