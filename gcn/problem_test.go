package gcn

import (
	"math"
	"math/rand/v2"

	"scalegnn/dataset"
	"scalegnn/spmm"
)

// testProblem is a small random graph with sizes chosen so that no grid
// axis divides any dimension evenly.
type testProblem struct {
	n, f, c int
	g       *Graph
}

func newProblem(seed uint64, n, f, c int, avgDeg float64) *testProblem {
	rng := rand.New(rand.NewPCG(seed, 99))
	var us, vs []int32
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			if rng.Float64() < avgDeg/float64(n) {
				us, vs = append(us, int32(u), int32(v)), append(vs, int32(v), int32(u))
			}
		}
	}
	adj := dataset.NormalizeGCN(spmm.FromCOO(n, n, us, vs, nil))
	g := &Graph{Adj: adj, Features: make([]float32, n*f), Labels: make([]int32, n),
		Train: make([]bool, n), Val: make([]bool, n), Test: make([]bool, n)}
	for i := range g.Features {
		if rng.Float64() < 0.4 {
			g.Features[i] = float32(rng.NormFloat64())
		}
	}
	for i := 0; i < n; i++ {
		g.Labels[i] = int32(rng.IntN(c))
		switch k := rng.IntN(10); {
		case k < 4:
			g.Train[i] = true
		case k < 6:
			g.Val[i] = true
		case k < 9:
			g.Test[i] = true
		}
	}
	return &testProblem{n: n, f: f, c: c, g: g}
}

func (p *testProblem) reference(cfg Config, opt Optimizer) *Reference {
	return NewReference(cfg, opt, p.g.Adj, p.g.Features, p.g.Labels, p.g.Train)
}

// maxRelErr returns max|got-want| / max(max|want|, floor).
func maxRelErr(got []float32, want []float64, floor float64) float64 {
	scale, diff := floor, 0.0
	for i, w := range want {
		scale = math.Max(scale, math.Abs(w))
		diff = math.Max(diff, math.Abs(float64(got[i])-w))
	}
	return diff / scale
}
