package gcn

import (
	"fmt"
	"math"

	"scalegnn/device"
)

// Optimizer holds the hyperparameters of the parameter update.
type Optimizer struct {
	// Name is "adam" (weight decay added to the gradient, as torch.optim.Adam),
	// "adamw" (decoupled weight decay) or "sgd".
	Name                  string
	LR, WeightDecay       float64
	Beta1, Beta2, Epsilon float64
}

// DefaultOptimizer is Adam with the Kipf & Welling settings.
func DefaultOptimizer() Optimizer {
	return Optimizer{Name: "adam", LR: 0.01, WeightDecay: 5e-4, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}
}

// Validate reports an unknown optimizer or an out-of-range value.
func (o Optimizer) Validate() error {
	switch o.Name {
	case "adam", "adamw", "sgd":
	default:
		return fmt.Errorf("gcn: optimizer %q: expected adam, adamw or sgd", o.Name)
	}
	if !(o.LR > 0) || o.WeightDecay < 0 || o.Beta1 < 0 || o.Beta1 >= 1 || o.Beta2 < 0 || o.Beta2 >= 1 || !(o.Epsilon > 0) {
		return fmt.Errorf("gcn: optimizer %+v: need lr > 0, weight_decay >= 0, betas in [0, 1), eps > 0", o)
	}
	return nil
}

// step holds what one optimizer step shares across all entries: the
// hyperparameters and Adam's bias corrections for step t (t counts from 1),
// computed once per step rather than once per entry.
type step struct {
	Optimizer
	corr1, corr2 float64
}

func (o Optimizer) step(t int) step {
	return step{o, 1 - math.Pow(o.Beta1, float64(t)), 1 - math.Pow(o.Beta2, float64(t))}
}

// update applies the step to a single parameter entry w with gradient g and
// moments m, v; decay says whether weight decay applies to this parameter
// (weights yes, norm scales no). It is the one definition of the update,
// used in float64 by the reference and by the distributed model alike.
func (o step) update(w, g, m, v float64, decay bool) (w2, m2, v2 float64) {
	wd := 0.0
	if decay {
		wd = o.WeightDecay
	}
	switch o.Name {
	case "sgd":
		return w - o.LR*(g+wd*w), m, v
	case "adam":
		g += wd * w
	}
	m = o.Beta1*m + (1-o.Beta1)*g
	v = o.Beta2*v + (1-o.Beta2)*g*g
	mh := m / o.corr1
	vh := v / o.corr2
	if o.Name == "adamw" {
		w -= o.LR * wd * w
	}
	return w - o.LR*mh/(math.Sqrt(vh)+o.Epsilon), m, v
}

// device returns the step's constants for device.OptimStep, whose update
// is update's, operation for operation.
func (o step) device(decay bool) device.OptimStep {
	st := device.OptimStep{LR: o.LR, Beta1: o.Beta1, Beta2: o.Beta2, Epsilon: o.Epsilon, Corr1: o.corr1, Corr2: o.corr2}
	switch o.Name {
	case "sgd":
		st.Kind = device.SGD
	case "adam":
		st.Kind = device.Adam
	case "adamw":
		st.Kind = device.AdamW
	}
	if decay {
		st.WeightDecay = o.WeightDecay
	}
	return st
}

// Step applies one optimizer update to every parameter block with the
// gradients left by Backward. Replicas apply identical updates.
func (m *Model) Step() {
	m.t++
	st := m.Opt.step(m.t)
	for _, p := range m.Params {
		m.dev.OptimStep(p.W, p.G, p.m, p.v, st.device(p.decay && !m.decayFolded))
	}
}
