package gcn

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"scalegnn/collectives"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/spmm"
)

func xyz(x, y, z int) grid.Shape { return grid.Shape{D: 1, X: x, Y: y, Z: z} }

// factorisations8 are all ordered ways to write 8 as Gx·Gy·Gz.
var factorisations8 = []grid.Shape{
	xyz(1, 1, 8), xyz(1, 8, 1), xyz(8, 1, 1), xyz(1, 2, 4), xyz(1, 4, 2),
	xyz(2, 1, 4), xyz(4, 1, 2), xyz(2, 4, 1), xyz(4, 2, 1), xyz(2, 2, 2),
}

// oddShapes have extents that are not powers of two.
var oddShapes = []grid.Shape{xyz(1, 1, 1), xyz(1, 2, 3), xyz(3, 1, 2), xyz(3, 3, 1), xyz(1, 5, 1)}

// assembled gathers the blocks of every rank into global matrices and
// checks on the way that replicas agree bit for bit.
type assembled struct {
	mu      sync.Mutex
	w, g    map[string][]float32 // weights and gradients of the last step
	final   map[string][]float32 // weights after the last optimizer step
	seen    map[string][]bool
	losses  [][]float64 // per rank
	badRepl error
}

func (a *assembled) add(rank int, m *Model, losses []float64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.losses[rank] = losses
	for _, p := range m.Params {
		if a.w[p.Name] == nil {
			a.w[p.Name] = make([]float32, p.Rows*p.Cols)
			a.g[p.Name] = make([]float32, p.Rows*p.Cols)
			a.seen[p.Name] = make([]bool, p.Rows*p.Cols)
		}
		bw := p.C1 - p.C0
		for i := p.R0; i < p.R1; i++ {
			for j := p.C0; j < p.C1; j++ {
				k, lk := i*p.Cols+j, (i-p.R0)*bw+j-p.C0
				if a.seen[p.Name][k] && (a.w[p.Name][k] != p.W[lk] || a.g[p.Name][k] != p.G[lk]) && a.badRepl == nil {
					a.badRepl = fmt.Errorf("rank %d: replicas of %s(%d,%d) disagree", rank, p.Name, i, j)
				}
				a.w[p.Name][k], a.g[p.Name][k], a.seen[p.Name][k] = p.W[lk], p.G[lk], true
			}
		}
	}
}

// runDistributed trains steps steps on the in-process grid: loss and
// gradient of each step, then an optimizer step.
func runDistributed(t *testing.T, p *testProblem, cfg Config, opt Optimizer, shape grid.Shape, scheme permute.Scheme, steps int) *assembled {
	t.Helper()
	perms := permute.New(p.n, scheme, 11)
	orders := NewOrders(p.n, perms.P1, perms.P2)
	a := &assembled{w: map[string][]float32{}, g: map[string][]float32{}, final: map[string][]float32{}, seen: map[string][]bool{}, losses: make([][]float64, shape.Ranks())}
	errs := collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
		g, err := grid.New(w, shape)
		if err != nil {
			return err
		}
		m, err := Build(g, spmm.NewNative(1), cfg, opt, p.g, orders)
		if err != nil {
			return err
		}
		var losses []float64
		for s := 0; s < steps; s++ {
			l, err := m.ForwardBackward(s)
			if err != nil {
				return err
			}
			losses = append(losses, l)
			if s < steps-1 {
				m.Step()
			}
		}
		// Record the last gradients, then the weights after the last step.
		a.add(w.Rank(), m, losses)
		m.Step()
		a.mu.Lock()
		for _, prm := range m.Params {
			if a.final[prm.Name] == nil {
				a.final[prm.Name] = make([]float32, prm.Rows*prm.Cols)
			}
			bw := prm.C1 - prm.C0
			for i := prm.R0; i < prm.R1; i++ {
				for j := prm.C0; j < prm.C1; j++ {
					a.final[prm.Name][i*prm.Cols+j] = prm.W[(i-prm.R0)*bw+j-prm.C0]
				}
			}
		}
		a.mu.Unlock()
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	if a.badRepl != nil {
		t.Fatal(a.badRepl)
	}
	return a
}

// Tolerances against the float64 reference, relative to the largest entry
// of each quantity: float32 storage and summation over a few dozen terms
// per product give errors near 1e-6; 1e-4 leaves room for the different
// summation orders of different grids without hiding a wrong block (which
// is off by O(1)).
const (
	lossTol   = 1e-5
	gradTol   = 1e-4
	weightTol = 1e-4
)

func checkAgainstReference(t *testing.T, p *testProblem, cfg Config, opt Optimizer, a *assembled, steps int) {
	t.Helper()
	r := p.reference(cfg, opt)
	for s := 0; s < steps; s++ {
		want := r.LossAndGrad(s)
		for rank, ls := range a.losses {
			if math.Abs(ls[s]-want) > lossTol*math.Max(1, math.Abs(want)) {
				t.Fatalf("step %d rank %d: loss %.9g, reference %.9g", s, rank, ls[s], want)
			}
		}
		if s < steps-1 {
			r.Step()
		}
	}
	for _, prm := range r.Params {
		if e := maxRelErr(a.g[prm.Name], prm.G, 1e-6); e > gradTol {
			t.Errorf("gradient of %s: relative error %.3g > %g", prm.Name, e, gradTol)
		}
	}
	r.Step()
	for _, prm := range r.Params {
		if e := maxRelErr(a.final[prm.Name], prm.W, 1e-6); e > weightTol {
			t.Errorf("%s after %d steps: relative error %.3g > %g", prm.Name, steps, e, weightTol)
		}
	}
}

// TestDistributedMatchesReference is the exactness contract of DESIGN.md:
// on every grid (all ten factorisations of 8 and non-power-of-two shapes),
// with and without double permutation, with residual and RMSNorm on, the
// loss of every step, every gradient and the updated weights match the
// serial float64 model.
func TestDistributedMatchesReference(t *testing.T) {
	p := newProblem(5, 37, 11, 5, 5)
	shapes := append(append([]grid.Shape{}, factorisations8...), oddShapes...)
	const steps = 3
	for _, name := range []string{"kipf", "scalegnn", "headonly", "deep"} {
		cfg := testConfigs[name]
		for _, scheme := range []permute.Scheme{permute.None, permute.Double} {
			for _, shape := range shapes {
				if testing.Short() && name != "scalegnn" && shape.Ranks() == 8 && shape.X != 2 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%v/%v", name, scheme, shape), func(t *testing.T) {
					opt := DefaultOptimizer()
					a := runDistributed(t, p, cfg, opt, shape, scheme, steps)
					checkAgainstReference(t, p, cfg, opt, a, steps)
				})
			}
		}
	}
}

// TestOptimizersMatchReference covers SGD and AdamW on one grid.
func TestOptimizersMatchReference(t *testing.T) {
	p := newProblem(6, 29, 11, 5, 4)
	cfg := testConfigs["scalegnn"]
	for _, name := range []string{"sgd", "adamw"} {
		opt := DefaultOptimizer()
		opt.Name = name
		opt.WeightDecay = 0.01
		t.Run(name, func(t *testing.T) {
			a := runDistributed(t, p, cfg, opt, xyz(1, 2, 3), permute.Single, 3)
			checkAgainstReference(t, p, cfg, opt, a, 3)
		})
	}
}

// TestAccuracyMatchesReference checks the distributed argmax and counts.
func TestAccuracyMatchesReference(t *testing.T) {
	p := newProblem(7, 41, 11, 5, 4)
	for _, name := range []string{"kipf", "scalegnn"} {
		cfg := testConfigs[name]
		r := p.reference(cfg, DefaultOptimizer())
		logits := r.Forward(false, 0)
		want := Accuracy{r.Accuracy(logits, p.g.Train), r.Accuracy(logits, p.g.Val), r.Accuracy(logits, p.g.Test)}
		for _, shape := range []grid.Shape{xyz(2, 2, 2), xyz(1, 2, 3), xyz(1, 1, 8)} {
			perms := permute.New(p.n, permute.Double, 3)
			orders := NewOrders(p.n, perms.P1, perms.P2)
			errs := collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
				g, err := grid.New(w, shape)
				if err != nil {
					return err
				}
				m, err := Build(g, spmm.NewNative(1), cfg, DefaultOptimizer(), p.g, orders)
				if err != nil {
					return err
				}
				got, err := m.Evaluate()
				if err != nil {
					return err
				}
				if got != want {
					return fmt.Errorf("%s on %v: accuracy %+v, reference %+v", name, shape, got, want)
				}
				return nil
			})
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
		}
	}
}
