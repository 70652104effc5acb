package gcn

import "math"

// testProblem is a small random graph (RandomGraph) with its sizes.
type testProblem struct {
	n, f, c int
	g       *Graph
}

func newProblem(seed uint64, n, f, c int, avgDeg float64) *testProblem {
	return &testProblem{n: n, f: f, c: c, g: RandomGraph(seed, n, f, c, avgDeg)}
}

func (p *testProblem) reference(cfg Config, opt Optimizer) *Reference {
	adj := p.g.Adj
	if cfg.Layer == SAGELayer {
		adj = MeanAdjacency(adj)
	}
	return NewReference(cfg, opt, adj, p.g.Features, p.g.Labels, p.g.Train)
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
