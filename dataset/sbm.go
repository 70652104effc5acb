package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"

	"scalegnn/internal/tomlx"
)

// SBMConfig describes a stochastic block model graph with class-correlated
// features. Start from DefaultSBMConfig and change what you need: every
// field is checked, and zero is a meaningful value for several of them.
type SBMConfig struct {
	// N is the number of vertices, in [Classes, 2^31-1].
	N int `toml:"nodes"`
	// Classes is the number of blocks (= label classes), at least 2: a
	// dataset is for learning its labels, and with one class the loss is
	// zero whatever the model. Labels are balanced: class sizes differ by
	// at most one.
	Classes int `toml:"classes"`
	// Features is the feature width F, at least 1.
	Features int `toml:"features"`
	// AvgDegree is the expected number of neighbours of a vertex, in
	// [0, N-1], and N·AvgDegree/2 at most 2^32. The graph gets round(N·AvgDegree/2) sampled edges; the few
	// duplicates and self loops among them are dropped.
	AvgDegree float64 `toml:"avg_degree"`
	// Homophily is the fraction of edges inside a class, in [0, 1].
	Homophily float64 `toml:"homophily"`
	// NoiseStd is the standard deviation of the Gaussian noise added to
	// each feature coordinate around the unit-length class centroid, >= 0.
	NoiseStd float64 `toml:"feature_noise"`
	// TrainFrac, ValFrac and TestFrac are the fractions of vertices, chosen
	// at random, in each split: TrainFrac in (0, 1], the others in [0, 1],
	// summing to at most 1.
	TrainFrac float64 `toml:"train_fraction"`
	ValFrac   float64 `toml:"val_fraction"`
	TestFrac  float64 `toml:"test_fraction"`
	// Seed determines the graph completely. A job file sets it with
	// dataset.seed, shared by the generators.
	Seed uint64 `toml:"-"`
}

// DefaultSBMConfig returns the defaults for n vertices: 8 classes, average
// degree 10, homophily 0.7, 64 features with noise 1.0, split 0.1/0.2/0.3,
// seed 1.
//
// The noise is chosen so that the raw features alone are a weak signal
// while averaging over a homophilous neighbourhood, which is what a GCN
// layer does, removes most of it. At n = 2000 (TestSBMNeedsTheGraph)
// logistic regression reaches about 23 % test accuracy on the features,
// 68 % on one round of GCN propagation and 92 % on two (chance: 12.5 %).
func DefaultSBMConfig(n int) SBMConfig {
	return SBMConfig{
		N: n, Classes: 8, AvgDegree: 10, Homophily: 0.7,
		Features: 64, NoiseStd: 1.0,
		TrainFrac: 0.1, ValFrac: 0.2, TestFrac: 0.3,
		Seed: 1,
	}
}

// Validate reports the first field outside its range, naming it by its
// key in a job file's [dataset.sbm] table (a *ConfigError).
func (c SBMConfig) Validate() error {
	ck := &tomlx.Checker{}
	ck.AtLeast("classes", c.Classes, 2)
	if ck.Err == nil && (c.N < c.Classes || c.N > math.MaxInt32) {
		ck.Fail("nodes", int64(c.N), fmt.Sprintf("an integer in [classes = %d, 2147483647]", c.Classes))
	}
	if ck.Err == nil && (c.Features < 1 || c.Features > maxDenseFeatures/c.N) {
		ck.Fail("features", int64(c.Features), "an integer >= 1 with nodes·features <= 2^32")
	}
	if ck.Err == nil && !(tomlx.NumberIn(c.AvgDegree, "[]", 0, float64(c.N-1)) && float64(c.N)*c.AvgDegree/2 <= maxSampledEdges) {
		ck.Fail("avg_degree", c.AvgDegree, fmt.Sprintf("a number in [0, nodes - 1 = %d] with nodes·avg_degree/2 <= 2^32", c.N-1))
	}
	ck.Number("homophily", c.Homophily, "[]", 0, 1)
	if ck.Err == nil && !tomlx.NumberIn(c.NoiseStd, "[]", 0, math.MaxFloat32) {
		ck.Fail("feature_noise", c.NoiseStd, "a finite number >= 0")
	}
	checkSplit(ck, c.TrainFrac, c.ValFrac, c.TestFrac)
	return configError("sbm", ck.Err)
}

// edgesPerChunk is the number of edges drawn from one random stream.
const edgesPerChunk = 1 << 16

// SBM generates a stochastic block model graph. Edges are sampled, not
// tested pair by pair, so the cost is O(N·F + E): each edge picks a
// uniform endpoint u, then with probability Homophily a uniform vertex of
// u's class, otherwise a uniform vertex of a uniformly chosen other class.
// Features follow the class centroids (see SBMConfig.NoiseStd). The result
// depends only on cfg, not on the number of CPUs that draw it.
func SBM(cfg SBMConfig) (*Graph, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n, C := cfg.N, cfg.Classes

	// Balanced labels in random order, and the members of each class.
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(i % C)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, streamLabels))
	rng.Shuffle(n, func(i, j int) { labels[i], labels[j] = labels[j], labels[i] })
	start := make([]int, C+1) // members of class c: members[start[c]:start[c+1]]
	for _, l := range labels {
		start[l+1]++
	}
	for c := range C {
		start[c+1] += start[c]
	}
	members := make([]int32, n)
	fill := append([]int(nil), start[:C]...)
	for i, l := range labels {
		members[fill[l]] = int32(i)
		fill[l]++
	}

	m := int(math.Round(float64(n) * cfg.AvgDegree / 2))
	// Capacity 2m lets symmetricAdj mirror the edges in place.
	us, vs := make([]int32, m, 2*m), make([]int32, m, 2*m)
	chunks := (m + edgesPerChunk - 1) / edgesPerChunk
	hom := cfg.Homophily
	if C == 1 {
		hom = 1
	}
	parallelChunks(chunks, func(k int) {
		rng := rand.New(chunkRand(cfg.Seed, streamEdges, k))
		for e := k * edgesPerChunk; e < min(m, (k+1)*edgesPerChunk); e++ {
			u := int32(rng.IntN(n))
			c := int(labels[u])
			if rng.Float64() >= hom {
				c = (c + 1 + rng.IntN(C-1)) % C
			}
			us[e] = u
			vs[e] = members[start[c]+rng.IntN(start[c+1]-start[c])]
		}
	})

	g := &Graph{
		Name:    "sbm",
		N:       n,
		Adj:     symmetricAdj(n, us, vs),
		F:       cfg.Features,
		Classes: C,
		Labels:  labels,
	}
	g.Features = classFeatures(labels, C, cfg.Features, cfg.NoiseStd, cfg.Seed)
	g.Train, g.Val, g.Test = randomSplit(n, cfg.TrainFrac, cfg.ValFrac, cfg.TestFrac, cfg.Seed)
	return g, nil
}
