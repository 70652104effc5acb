package perfmodel

import (
	"fmt"
	"math"
)

// NeighborJob is what the model needs to know about a train.mode =
// "neighbor" job (package neighbor) beyond Job: Job.Mode is gcn.Neighbor,
// the model is Job's plain stack of Layers graph layers.
type NeighborJob struct {
	// Fanouts[l] is the most neighbours a destination of layer l keeps,
	// first layer first (train.fanouts).
	Fanouts []int
	// Seeds is the seeds per rank per step (train.batch_size); 0 takes
	// DefaultSeeds, or TrainVertices/ranks where that is fewer (a
	// mini-batch job listed beside its neighbor-mode alternative).
	Seeds int
	// TrainVertices is the size of the training set: an epoch is
	// ceil(TrainVertices / (ranks·Seeds)) steps.
	TrainVertices int
	// Prefetch: the next batch is built while the step trains, so only
	// the part of the build time above the step's time shows.
	Prefetch bool
	// Degrees is the degree histogram without self loops: Degrees[k] is
	// the (expected) number of vertices of degree k. nil: a Poisson
	// distribution of mean (NNZ − N)/N (DegreeHistogram, RMATDegrees and
	// PoissonDegrees make one).
	Degrees []float64
	// BuildEdge is the seconds one rank spends building a batch per
	// sampled edge (sampling, the operators' weights and transposes, the
	// exchange plan); 0 takes DefaultBuildEdge.
	BuildEdge float64
}

// DefaultBuildEdge is the batch build time per sampled edge measured on
// the development machine with 8 ranks sharing its 2 cores
// (bench/neighbor-vs-4d.sh, R-MAT scale 20, 256 seeds, fanouts
// [15, 10, 5]: sample_s_max 0.69 s for 6 steps of 87.6k expected edges).
// The fused sampler alone on a core of its own takes 0.2 µs an edge
// (BenchmarkNeighborSampler). A job's metrics (sample_s) give a
// machine's own value.
const DefaultBuildEdge = 1.3e-6

// DefaultSeeds is the seeds per rank of a job that names none: DGL's
// and FastSample's usual 1024.
const DefaultSeeds = 1024

// withSeeds returns j with Neighbor.Seeds resolved for ranks ranks.
func (j Job) withSeeds(ranks int) Job {
	if j.Neighbor.Seeds == 0 {
		j.Neighbor.Seeds = max(1, min(DefaultSeeds, j.Neighbor.TrainVertices/max(ranks, 1)))
	}
	return j
}

// MFGSize is the expected size of one layer's message-flow graph on one
// rank: Dst destinations, Src sources (the destinations first), Edges
// sampled edges.
type MFGSize struct {
	Dst, Src, Edges float64
}

// validateNeighbor reports the first field that makes a neighbor job
// impossible to model.
func (j Job) validateNeighbor(ranks int) error {
	nb := j.Neighbor
	if len(nb.Fanouts) != j.Layers {
		return fmt.Errorf("perfmodel: neighbor job has fanouts %v for %d layers: expected one fanout per layer", nb.Fanouts, j.Layers)
	}
	for l, f := range nb.Fanouts {
		if f < 1 {
			return fmt.Errorf("perfmodel: neighbor job's fanout %d of layer %d: expected at least 1", f, l)
		}
	}
	if nb.Seeds < 1 || ranks*nb.Seeds > nb.TrainVertices {
		return fmt.Errorf("perfmodel: neighbor job with %d seeds per rank on %d ranks and %d training vertices: expected 1 <= ranks·seeds <= training vertices",
			nb.Seeds, ranks, nb.TrainVertices)
	}
	return nil
}

// NeighborSteps returns the steps of one epoch on ranks ranks.
func (j Job) NeighborSteps(ranks int) int {
	g := ranks * j.Neighbor.Seeds
	return (j.Neighbor.TrainVertices + g - 1) / g
}

// degrees returns the job's degree histogram (Poisson of the mean
// degree when the job has none).
func (j Job) degrees() []float64 {
	if j.Neighbor.Degrees != nil {
		return j.Neighbor.Degrees
	}
	return PoissonDegrees(j.N, math.Max(0, float64(j.NNZ)-float64(j.N))/float64(j.N))
}

// ExpectedMFGs returns the expected sizes of one rank's message-flow
// graphs of one step, first layer first (Layers[0].Src is the input
// frontier, the last layer's Dst the seeds).
//
// The estimate is a mean field over degree classes. The set S of a
// layer's destinations is kept as counts n_k of vertices of degree k;
// the seeds are uniform over the vertices, n_k = B·h_k/N. A destination
// of degree k keeps min(k, f) neighbours, so the layer has
// E = Σ_k n_k·min(k, f) edges. A sampled edge ends at a uniform edge
// endpoint, so a vertex of degree k is hit by E·k/(2M) edges in
// expectation (2M = Σ_k k·h_k, the stored edges) and, hits being rare
// and nearly independent, is reached with probability
// π_k = 1 − exp(−E'·k/(2M)). E' leaves out the edges back to where a
// destination was reached from: a destination of degree k first reached
// by the layer above has that vertex among its neighbours and samples
// the edge back with probability min(k, f)/k, and its other end is a
// source already (on a sparse graph with fanouts near the degree this is
// most of the repeats). The sources are the destinations and the
// vertices newly reached: n'_k = n_k + (h_k − n_k)·π_k, which are the
// next layer's destinations. High-degree vertices are reached far more
// often than their share, which is what makes the frontier of a
// heavy-tailed graph smaller than B·Π f. It ignores clustering (a
// neighbour of a destination is likelier to be a destination itself),
// so it overestimates the frontier a little on clustered graphs.
func (j Job) ExpectedMFGs() []MFGSize {
	h := j.degrees()
	var twoM, n float64
	for k, c := range h {
		twoM += float64(k) * c
		n += c
	}
	L := j.Layers
	out := make([]MFGSize, L)
	cnt := make([]float64, len(h))
	b := float64(j.Neighbor.Seeds)
	for k, c := range h {
		cnt[k] = b * c / n
	}
	added := make([]float64, len(h)) // the vertices the last layer reached first
	for l := L - 1; l >= 0; l-- {
		f := j.Neighbor.Fanouts[l]
		var dst, e, back float64
		for k, c := range cnt {
			if k == 0 {
				dst += c
				continue
			}
			m := float64(min(k, f))
			dst += c
			e += c * m
			back += added[k] * m / float64(k)
		}
		// Edges that can reach a new vertex: a vertex reached from w has w
		// among its neighbours and samples that edge back with
		// probability min(k, f)/k, and w is already a source.
		fresh := math.Max(0, e-back)
		src := 0.0
		for k, c := range cnt {
			pi := 0.0
			if twoM > 0 {
				pi = -math.Expm1(-fresh * float64(k) / twoM)
			}
			added[k] = (h[k] - c) * pi
			cnt[k] = c + added[k]
			src += cnt[k]
		}
		out[l] = MFGSize{Dst: dst, Src: src, Edges: e}
	}
	return out
}

// PoissonDegrees returns the degree histogram of n vertices whose
// degrees are Poisson of mean mean (an Erdős–Rényi or SBM graph), cut
// where the tail holds less than 1e-9 of the vertices.
func PoissonDegrees(n int, mean float64) []float64 {
	var h []float64
	kmax := int(mean + 12*math.Sqrt(mean) + 20)
	for k := 0; k <= kmax; k++ {
		lg, _ := math.Lgamma(float64(k + 1))
		p := math.Exp(float64(k)*math.Log(math.Max(mean, 1e-300)) - mean - lg)
		if k == 0 {
			p = math.Exp(-mean)
		}
		h = append(h, float64(n)*p)
	}
	return h
}

// RMATDegrees returns the expected degree histogram of dataset.RMAT's
// symmetrised graph of 2^scale vertices with edgeFactor·2^scale samples
// and quadrant probabilities a, b, c (d = 1 − a − b − c), whose
// off-diagonal nonzeros are offNNZ (the job's NNZ − N). A vertex with o
// one bits in its id is an endpoint of λ_o = m·((a+b)^(s−o)·(c+d)^o +
// (a+c)^(s−o)·(b+d)^o) samples in expectation (as a row and as a column);
// duplicates and self loops are dropped, which the factor
// offNNZ/Σ C(s,o)·λ_o restores on average, and a vertex's distinct
// neighbours, a sum of many rare independent events, are Poisson of its
// class's mean.
func RMATDegrees(scale, edgeFactor int, a, b, c float64, offNNZ float64) []float64 {
	d := 1 - a - b - c
	s := float64(scale)
	m := float64(edgeFactor) * math.Exp2(s)
	lf := func(k int) float64 { v, _ := math.Lgamma(float64(k + 1)); return v }
	lambda := make([]float64, scale+1)
	count := make([]float64, scale+1)
	var total float64
	for o := 0; o <= scale; o++ {
		fo := float64(o)
		lambda[o] = m * (math.Pow(a+b, s-fo)*math.Pow(c+d, fo) + math.Pow(a+c, s-fo)*math.Pow(b+d, fo))
		count[o] = math.Exp(lf(scale) - lf(o) - lf(scale-o))
		total += count[o] * lambda[o]
	}
	kappa := 1.0
	if total > 0 {
		kappa = offNNZ / total
	}
	var h []float64
	for o := 0; o <= scale; o++ {
		p := PoissonDegrees(int(math.Round(count[o])), kappa*lambda[o])
		if len(p) > len(h) {
			h = append(h, make([]float64, len(p)-len(h))...)
		}
		for k, x := range p {
			h[k] += x
		}
	}
	return h
}

// DegreeHistogram returns the exact degree histogram of a CSR
// adjacency, a stored diagonal entry not counted.
func DegreeHistogram(rowPtr []int64, colIdx []int32) []float64 {
	var h []float64
	for v := 0; v+1 < len(rowPtr); v++ {
		k := 0
		for p := rowPtr[v]; p < rowPtr[v+1]; p++ {
			if int(colIdx[p]) != v {
				k++
			}
		}
		for len(h) <= k {
			h = append(h, 0)
		}
		h[k]++
	}
	return h
}
