package dataset

import (
	"math"
	"math/rand/v2"

	"scalegnn/internal/tomlx"
)

// RMATConfig describes an R-MAT power-law graph (Chakrabarti, Zhan and
// Faloutsos, 2004) in the Graph500 setting. R-MAT graphs are for scaling
// and load-balance runs: the labels are random and the features follow
// the labels, so accuracy on them means nothing.
type RMATConfig struct {
	// Scale gives N = 2^Scale vertices, in [1, 30].
	Scale int `toml:"scale"`
	// EdgeFactor gives the number of sampled edges, EdgeFactor·N, in
	// [1, 1024], with at most 2^32 edges in all. Duplicates and self loops are then dropped, so the graph
	// has somewhat fewer undirected edges.
	EdgeFactor int `toml:"edge_factor"`
	// A, B, C, D are the probabilities of the four quadrants at every level
	// of the recursion, each in [0, 1], summing to 1. A job file gives a,
	// b and c; D is then 1 - A - B - C.
	A float64 `toml:"a"`
	B float64 `toml:"b"`
	C float64 `toml:"c"`
	D float64 `toml:"-"`
	// Classes is the number of random labels, in [2, N] (see
	// SBMConfig.Classes).
	Classes int `toml:"classes"`
	// Features is the feature width, at least 1; features are a random
	// unit class centroid plus N(0, NoiseStd²) per coordinate (NoiseStd is
	// 1 in a job file).
	Features int     `toml:"features"`
	NoiseStd float64 `toml:"-"`
	// TrainFrac, ValFrac and TestFrac are the random split fractions, as
	// in SBMConfig.
	TrainFrac float64 `toml:"train_fraction"`
	ValFrac   float64 `toml:"val_fraction"`
	TestFrac  float64 `toml:"test_fraction"`
	// Seed determines the graph completely (dataset.seed in a job file).
	Seed uint64 `toml:"-"`
}

// DefaultRMATConfig returns the Graph500 parameters (a, b, c, d) = (0.57,
// 0.19, 0.19, 0.05) and edge factor 16 at the given scale, with 16 classes,
// 64 features, noise 1.0, split 0.1/0.2/0.3 and seed 1.
func DefaultRMATConfig(scale int) RMATConfig {
	return RMATConfig{
		Scale: scale, EdgeFactor: 16,
		A: 0.57, B: 0.19, C: 0.19, D: 0.05,
		Classes: 16, Features: 64, NoiseStd: 1.0,
		TrainFrac: 0.1, ValFrac: 0.2, TestFrac: 0.3,
		Seed: 1,
	}
}

// Validate reports the first field outside its range, naming it by its
// key in a job file's [dataset.rmat] table (a *ConfigError).
func (c RMATConfig) Validate() error {
	ck := &tomlx.Checker{}
	ck.IntIn("scale", c.Scale, 1, 30)
	if ck.Err != nil {
		return configError("rmat", ck.Err)
	}
	n := 1 << c.Scale
	if c.EdgeFactor < 1 || c.EdgeFactor > 1024 || c.EdgeFactor > maxSampledEdges/n {
		ck.Fail("edge_factor", int64(c.EdgeFactor), "an integer in [1, 1024] with edge_factor·2^scale <= 2^32")
	}
	ck.Number("a", c.A, "[]", 0, 1)
	ck.Number("b", c.B, "[]", 0, 1)
	ck.Number("c", c.C, "[]", 0, 1)
	if s := c.A + c.B + c.C; ck.Err == nil && s > 1+1e-9 {
		ck.Failf("a + b + c = %.4g: expected at most 1 (d = 1 - a - b - c)", s)
	}
	ck.Number("d", c.D, "[]", 0, 1)
	if s := c.A + c.B + c.C + c.D; ck.Err == nil && math.Abs(s-1) > 1e-6 {
		ck.Failf("a + b + c + d = %g: expected 1", s)
	}
	ck.IntIn("classes", c.Classes, 2, n)
	if ck.Err == nil && (c.Features < 1 || c.Features > maxDenseFeatures/n) {
		ck.Fail("features", int64(c.Features), "an integer >= 1 with 2^scale·features <= 2^32")
	}
	if ck.Err == nil && !tomlx.NumberIn(c.NoiseStd, "[]", 0, math.MaxFloat32) {
		ck.Fail("feature_noise", c.NoiseStd, "a finite number >= 0")
	}
	checkSplit(ck, c.TrainFrac, c.ValFrac, c.TestFrac)
	return configError("rmat", ck.Err)
}

// RMAT generates an R-MAT graph: each of EdgeFactor·N edges descends Scale
// levels of the adjacency matrix, choosing a quadrant with probabilities
// A, B, C, D at each. The edges are symmetrised with duplicates and self
// loops removed.
//
// Vertex ids are deliberately not scrambled (Graph500 scrambles them): the
// high-degree vertices cluster at small ids, the skewed layout that the
// permutations of package permute exist to balance. The Graph500 noise on
// the quadrant probabilities is omitted too.
//
// Sampling takes 16 random bits per level and runs in parallel over fixed
// chunks of edges, each with its own stream, so the graph depends only on
// cfg. Memory is two int32 arrays of 2·E entries plus the CSR.
func RMAT(cfg RMATConfig) (*Graph, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := 1 << cfg.Scale
	m := cfg.EdgeFactor * n
	smp := newRMATSampler(cfg)
	us, vs := make([]int32, m, 2*m), make([]int32, m, 2*m)
	chunks := (m + edgesPerChunk - 1) / edgesPerChunk
	parallelChunks(chunks, func(k int) {
		lo, hi := k*edgesPerChunk, min(m, (k+1)*edgesPerChunk)
		smp.chunk(k, us[lo:hi], vs[lo:hi])
	})

	labels, tr, va, te := rmatVertices(cfg)
	g := &Graph{
		Name:    "rmat",
		N:       n,
		Adj:     symmetricAdj(n, us, vs),
		F:       cfg.Features,
		Classes: cfg.Classes,
		Labels:  labels,
	}
	g.Features = classFeatures(labels, cfg.Classes, cfg.Features, cfg.NoiseStd, cfg.Seed)
	g.Train, g.Val, g.Test = tr, va, te
	return g, nil
}

// rmatSampler draws the edges of one chunk of an R-MAT graph.
type rmatSampler struct {
	cfg           RMATConfig
	ta, tab, tabc uint64
}

func newRMATSampler(cfg RMATConfig) rmatSampler {
	// Quadrant thresholds on a 16-bit uniform r: r < ta → A, < tab → B,
	// < tabc → C, else D. 16 bits resolve the probabilities to 1.5e-5,
	// and one 64-bit draw serves four levels.
	const one = 1 << 16
	return rmatSampler{
		cfg:  cfg,
		ta:   uint64(math.Round(cfg.A * one)),
		tab:  uint64(math.Round((cfg.A + cfg.B) * one)),
		tabc: uint64(math.Round((cfg.A + cfg.B + cfg.C) * one)),
	}
}

// chunk fills us, vs with the edges of chunk k (at most edgesPerChunk),
// from the chunk's own random stream.
func (s rmatSampler) chunk(k int, us, vs []int32) {
	const one = 1 << 16
	rng := chunkRand(s.cfg.Seed, streamEdges, k)
	var bits uint64
	left := 0 // unused 16-bit draws in bits
	for e := range us {
		var u, v int32
		for range s.cfg.Scale {
			if left == 0 {
				bits, left = rng.Uint64(), 4
			}
			r := bits & (one - 1)
			bits >>= 16
			left--
			u, v = u<<1, v<<1
			switch {
			case r < s.ta:
			case r < s.tab:
				v |= 1
			case r < s.tabc:
				u |= 1
			default:
				u, v = u|1, v|1
			}
		}
		us[e], vs[e] = u, v
	}
}

// rmatVertices draws the labels and the split of an R-MAT graph.
func rmatVertices(cfg RMATConfig) (labels []int32, tr, va, te []bool) {
	n := 1 << cfg.Scale
	labels = make([]int32, n)
	rng := rand.New(rand.NewPCG(cfg.Seed, streamLabels))
	for i := range labels {
		labels[i] = int32(rng.IntN(cfg.Classes))
	}
	tr, va, te = randomSplit(n, cfg.TrainFrac, cfg.ValFrac, cfg.TestFrac, cfg.Seed)
	return labels, tr, va, te
}
