package gcn

import (
	"math/rand/v2"

	"scalegnn/dataset"
	"scalegnn/spmm"
)

// RandomGraph is a small random graph for checking the distributed model
// against the serial reference: n vertices, each pair an edge with
// probability avgDegree/n, the GCN-normalised adjacency, sparse Gaussian
// features (40% nonzero), uniform labels in [0, classes) and a 40/20/30
// train/val/test split (10% in none). It is a pure function of its
// arguments, so every rank of a job builds the same graph without
// communicating. Sizes that are primes keep every grid axis from dividing
// a dimension evenly.
func RandomGraph(seed uint64, n, features, classes int, avgDegree float64) *Graph {
	rng := rand.New(rand.NewPCG(seed, 99))
	var us, vs []int32
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			if rng.Float64() < avgDegree/float64(n) {
				us, vs = append(us, int32(u), int32(v)), append(vs, int32(v), int32(u))
			}
		}
	}
	adj := dataset.NormalizeGCN(spmm.FromCOO(n, n, us, vs, nil))
	g := &Graph{Adj: adj, Features: make([]float32, n*features), Labels: make([]int32, n),
		Train: make([]bool, n), Val: make([]bool, n), Test: make([]bool, n)}
	for i := range g.Features {
		if rng.Float64() < 0.4 {
			g.Features[i] = float32(rng.NormFloat64())
		}
	}
	for i := 0; i < n; i++ {
		g.Labels[i] = int32(rng.IntN(classes))
		switch k := rng.IntN(10); {
		case k < 4:
			g.Train[i] = true
		case k < 6:
			g.Val[i] = true
		case k < 9:
			g.Test[i] = true
		}
	}
	return g
}
