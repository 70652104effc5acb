package gcn

import (
	"math"
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
			r.LossAndGrad(step)
			for _, prm := range r.Params {
				grad := append([]float64(nil), prm.G...)
				scale := 1e-3
				for _, g := range grad {
					scale = math.Max(scale, math.Abs(g))
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
					if math.Abs(fd-grad[k]) > 1e-5*scale {
						t.Errorf("%s[%d]: analytic %.9g, finite difference %.9g", prm.Name, k, grad[k], fd)
					}
				}
			}
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
