package gcn

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
)

// scaledWeights trains the kipf model for steps on d data-parallel replicas
// (each on the whole graph, so their gradients agree) with every worker's
// GradScale set to scale, and returns replica 0's weights.
func scaledWeights(t *testing.T, p *testProblem, opt Optimizer, scale float32, d, steps int) [][]float32 {
	t.Helper()
	var out [][]float32
	var mu sync.Mutex
	runLocal(t, d, func(w collectives.Comm) error {
		g, err := grid.New(w, grid.Shape{D: d, X: 1, Y: 1, Z: 1})
		if err != nil {
			return err
		}
		m, err := Build(g, device.NewNative(1), testConfigs["kipf"], opt, p.g, NewOrders(p.n, nil, nil), Options{})
		if err != nil {
			return err
		}
		for s := range steps {
			m.GradScale = scale
			if _, err := m.TrainStep(s); err != nil {
				return err
			}
		}
		if w.Rank() == 0 {
			mu.Lock()
			defer mu.Unlock()
			for _, q := range m.Params {
				out = append(out, q.Weights())
			}
		}
		return nil
	})
	return out
}

// TestGradScaleScalesDecay: the coverage factor scales the gradient of the
// worker's whole objective, coupled weight decay included, so SGD with
// factor c is SGD with learning rate c·lr, and Adam (coupled or decoupled
// decay) with one factor on every worker is Adam without it. Were the decay
// added after the scale, the SGD case would decay 1/c times too fast and
// the Adam case would weigh decay 1/c times more against the data.
func TestGradScaleScalesDecay(t *testing.T) {
	p := newProblem(17, 40, 11, 5, 4)
	const wd = 0.05 // large, so a decay left unscaled shows
	sgd := DefaultOptimizer()
	sgd.Name, sgd.LR, sgd.WeightDecay = "sgd", 0.4, wd
	adam := DefaultOptimizer()
	adam.WeightDecay, adam.Epsilon = wd, 1e-12 // ε small against the scaled gradient
	adamw := adam
	adamw.Name = "adamw"
	slow := sgd
	slow.LR = sgd.LR * 0.25
	for _, tc := range []struct {
		name       string
		opt, plain Optimizer
		scale      float32
		tol        float64
	}{
		{"sgd", sgd, slow, 0.25, 1e-5},
		{"adam", adam, adam, 0.01, 1e-4},
		{"adamw", adamw, adamw, 0.01, 1e-4},
	} {
		for _, d := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/d=%d", tc.name, d), func(t *testing.T) {
				got := scaledWeights(t, p, tc.opt, tc.scale, d, 5)
				want := scaledWeights(t, p, tc.plain, 1, 1, 5)
				for i := range want {
					w64 := make([]float64, len(want[i]))
					for j, v := range want[i] {
						w64[j] = float64(v)
					}
					if e := maxRelErr(got[i], w64, 1e-3); !(e <= tc.tol) || math.IsNaN(e) {
						t.Errorf("param %d: relative error %.3g against the unscaled run, want ≤ %g", i, e, tc.tol)
					}
				}
			})
		}
	}
}
