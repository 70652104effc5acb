package gcn

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/permute"
)

func xyz(x, y, z int) grid.Shape { return grid.Shape{D: 1, X: x, Y: y, Z: z} }

// factorisations8 are all ordered ways to write 8 as Gx·Gy·Gz.
var factorisations8 = []grid.Shape{
	xyz(1, 1, 8), xyz(1, 8, 1), xyz(8, 1, 1), xyz(1, 2, 4), xyz(1, 4, 2),
	xyz(2, 1, 4), xyz(4, 1, 2), xyz(2, 4, 1), xyz(4, 2, 1), xyz(2, 2, 2),
}

// oddShapes have extents that are not powers of two.
var oddShapes = []grid.Shape{xyz(1, 1, 1), xyz(1, 2, 3), xyz(3, 1, 2), xyz(3, 3, 1), xyz(1, 5, 1)}

// conformance runs the conformance suite in process on one shape and
// one case, and fails the test with every rank's errors.
func conformance(t *testing.T, suite ConformanceSuite, shape grid.Shape, c ConformanceCase) {
	t.Helper()
	suite.Shapes, suite.Cases = []grid.Shape{shape}, []ConformanceCase{c}
	for r, err := range collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
		return errors.Join(Conformance(w, device.NewNative(1), suite)...)
	}) {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// TestDistributedMatchesReference is the exactness contract (docs/architecture.md):
// on every grid (all ten factorisations of 8 and non-power-of-two shapes),
// with and without double permutation, with residual and RMSNorm on, the
// loss of every step, every gradient and the updated weights match the
// serial float64 model (the conformance suite's full-graph check).
func TestDistributedMatchesReference(t *testing.T) {
	suite := ConformanceSuite{Graph: RandomGraph(5, 37, 11, 5, 5), Steps: 3}
	shapes := append(append([]grid.Shape{}, factorisations8...), oddShapes...)
	configs := maps.Clone(testConfigs)
	maps.Copy(configs, gatTestConfigs)
	for _, name := range []string{"kipf", "scalegnn", "headonly", "deep", "sage", "sagefull", "gat", "gatfull"} {
		for _, scheme := range []permute.Scheme{permute.None, permute.Double} {
			c := ConformanceCase{Name: name, Config: configs[name], Optimizer: DefaultOptimizer(), Scheme: scheme, PermSeed: 11}
			for _, shape := range shapes {
				if testing.Short() && name != "scalegnn" && shape.Ranks() == 8 && shape.X != 2 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%v/%v", name, scheme, shape), func(t *testing.T) { conformance(t, suite, shape, c) })
			}
		}
	}
}

// TestOptimizersMatchReference covers SGD and AdamW on one grid.
func TestOptimizersMatchReference(t *testing.T) {
	suite := ConformanceSuite{Graph: RandomGraph(6, 29, 11, 5, 4), Steps: 3}
	for _, name := range []string{"sgd", "adamw"} {
		opt := DefaultOptimizer()
		opt.Name = name
		opt.WeightDecay = 0.01
		c := ConformanceCase{Name: name, Config: testConfigs["scalegnn"], Optimizer: opt, Scheme: permute.Single, PermSeed: 11}
		t.Run(name, func(t *testing.T) { conformance(t, suite, xyz(1, 2, 3), c) })
	}
}

// TestAccuracyMatchesReference checks the distributed argmax and counts,
// and the validation loss (the loss's machinery over the validation mask),
// on grids of powers of two and not.
func TestAccuracyMatchesReference(t *testing.T) {
	p := newProblem(7, 41, 11, 5, 4)
	for _, name := range []string{"kipf", "scalegnn", "sage"} {
		cfg := testConfigs[name]
		r := p.reference(cfg, DefaultOptimizer())
		logits := r.Forward(false, 0)
		want := Accuracy{Train: r.Accuracy(logits, p.g.Train), Val: r.Accuracy(logits, p.g.Val), Test: r.Accuracy(logits, p.g.Test),
			ValLoss: r.Loss(logits, p.g.Val)}
		for _, shape := range []grid.Shape{xyz(1, 1, 1), xyz(2, 2, 2), xyz(1, 2, 3), xyz(1, 1, 8), xyz(3, 1, 2)} {
			perms := permute.New(p.n, permute.Double, 3)
			orders := NewOrders(p.n, perms.P1, perms.P2)
			errs := collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
				g, err := grid.New(w, shape)
				if err != nil {
					return err
				}
				m, err := Build(g, device.NewNative(1), cfg, DefaultOptimizer(), p.g, orders, Options{})
				if err != nil {
					return err
				}
				got, err := m.Evaluate()
				if err != nil {
					return err
				}
				// The validation loss in float32 against float64: to the
				// conformance suite's loss tolerance.
				if d := got.ValLoss - want.ValLoss; !(math.Abs(d) <= conformanceLossTol*math.Max(1, want.ValLoss)) || want.ValLoss <= 0 {
					return fmt.Errorf("%s on %v: validation loss %.9g, reference %.9g", name, shape, got.ValLoss, want.ValLoss)
				}
				got.ValLoss = want.ValLoss
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
