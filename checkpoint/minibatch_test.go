package checkpoint

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
)

// Mini-batch training of the test model as jobs.Train runs it: each step
// every replica builds its batch from (seed, replica, step), trains on it,
// and the gradients are averaged over the replicas.
const (
	batchSeed  = 42
	batchSize  = 19 // of 37 vertices: about half, as examples/cora-minibatch-8.toml
	batchSteps = 12
	resumeAt   = 4 // the checkpoint's step
)

// losses[d][s] is replica d's loss at step s.
type losses struct {
	mu sync.Mutex
	l  [][]float64
}

func (ls *losses) set(d, step int, loss float64) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for len(ls.l) <= d {
		ls.l = append(ls.l, make([]float64, batchSteps))
	}
	ls.l[d][step] = loss
}

// trainBatches trains on shape from step from to batchSteps with bf16
// 3D-PMM sums or not, after loading the checkpoint dir when from > 0,
// saving the checkpoint of step resumeAt into root when root is not
// empty. It returns the losses of the steps it took.
func trainBatches(shape grid.Shape, bf16 bool, from int, dir, root string) (*losses, error) {
	var ls losses
	err := runOn(shape, func(world collectives.Comm) error {
		m, err := build(world, shape, testConfig, testGraph, gcn.Options{Overlap: true, BF16: bf16})
		if err != nil {
			return err
		}
		if from > 0 {
			man, err := ReadManifest(dir)
			if err != nil {
				return err
			}
			if err := Load(world, dir, m, man); err != nil {
				return err
			}
		}
		bb, err := gcn.NewBatchBuilder(m.Grid(), testConfig, m.Shards(), batchSeed, batchSize)
		if err != nil {
			return err
		}
		for step := from; step < batchSteps; step++ {
			if root != "" && step == resumeAt {
				fp, err := m.Fingerprint()
				if err != nil {
					return err
				}
				man := Manifest{Step: step, OptimizerStep: m.OptimizerSteps(), Grid: shape.String(),
					Dataset: DatasetOf(fp, "double", permSeed), Model: ModelOf(testConfig)}
				if _, err := Save(world, root, 0, m, man, testJob); err != nil {
					return err
				}
			}
			sh, err := bb.Build(step)
			if err != nil {
				return err
			}
			m.Use(sh)
			loss, err := m.TrainStep(step)
			if err != nil {
				return err
			}
			ls.set(m.Grid().CD, step, loss)
		}
		return nil
	})
	return &ls, err
}

// maxRelDiff is the largest relative difference of the losses of steps
// [from, batchSteps) over the replicas.
func maxRelDiff(a, b *losses, from int) (float64, error) {
	if len(a.l) != len(b.l) {
		return 0, fmt.Errorf("%d replicas, want %d", len(b.l), len(a.l))
	}
	worst := 0.0
	for d := range a.l {
		for s := from; s < batchSteps; s++ {
			x, y := a.l[d][s], b.l[d][s]
			if x == 0 || math.IsNaN(y) {
				return 0, fmt.Errorf("replica %d step %d: losses %v and %v", d, s, x, y)
			}
			worst = max(worst, math.Abs(x-y)/math.Abs(x))
		}
	}
	return worst, nil
}

// TestMiniBatchResumeAcrossGrids: a data-parallel mini-batch run (two
// replicas of 2×2×1) checkpointed at step 4 and resumed on the same grid
// takes the same steps bit for bit; resumed on other grids of two
// replicas (1×1×1, 1×2×3, 2×2×2 each) its losses agree with the
// uninterrupted run's within 1e-5 with float32 sums. With bfloat16 sums
// (comm_dtype = "bf16") they cannot: each grid splits the 3D-PMM sums
// into other partial sums, each rounded to 8 bits of mantissa (relative
// 2^-9 ≈ 2e-3) before it is added, so another grid's run is another
// rounding of the same arithmetic, like an uninterrupted run on that grid.
// The bound asserted is the one the uninterrupted runs on those grids
// themselves keep against the 2×2×1 run (measured in the same test),
// with a margin of 2: a resume adds no error of its own; and at most
// 2^-6, four roundings of bfloat16, whatever the grids.
func TestMiniBatchResumeAcrossGrids(t *testing.T) {
	others := []grid.Shape{{D: 2, X: 1, Y: 1, Z: 1}, {D: 2, X: 1, Y: 2, Z: 3}, {D: 2, X: 2, Y: 2, Z: 2}}
	for _, bf16 := range []bool{false, true} {
		t.Run(fmt.Sprintf("bf16=%v", bf16), func(t *testing.T) {
			root := t.TempDir()
			want, err := trainBatches(dp, bf16, 0, "", root)
			if err != nil {
				t.Fatal(err)
			}
			dir := root + "/" + Name(resumeAt)
			same, err := trainBatches(dp, bf16, resumeAt, dir, "")
			if err != nil {
				t.Fatal(err)
			}
			if d, err := maxRelDiff(want, same, resumeAt); err != nil || d != 0 {
				t.Errorf("resumed on the same grid %v: largest relative loss difference %g (%v), want 0", dp, d, err)
			}
			for _, shape := range others {
				got, err := trainBatches(shape, bf16, resumeAt, dir, "")
				if err != nil {
					t.Fatal(err)
				}
				d, err := maxRelDiff(want, got, resumeAt)
				if err != nil {
					t.Fatal(err)
				}
				bound := 1e-5
				if bf16 {
					whole, err := trainBatches(shape, bf16, 0, "", "")
					if err != nil {
						t.Fatal(err)
					}
					ref, err := maxRelDiff(want, whole, resumeAt)
					if err != nil {
						t.Fatal(err)
					}
					bound = max(2*ref, 1e-5)
					t.Logf("bf16: %v uninterrupted vs %v: %.3g", shape, dp, ref)
				}
				t.Logf("resumed on %v: largest relative loss difference %.3g (bound %.3g)", shape, d, bound)
				if d > bound || d > 1.0/64 {
					t.Errorf("resumed on %v: largest relative loss difference %g, want at most %g", shape, d, bound)
				}
			}
		})
	}
}
