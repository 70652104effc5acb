package dataset

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync/atomic"

	"scalegnn/internal/par"
	"scalegnn/internal/tomlx"
)

// Random streams. Each use of randomness in the generators draws from its
// own PCG stream (seed, stream), so that changing one part (say the
// feature width) leaves the others (the edges) unchanged, and chunks drawn
// in parallel are reproducible whatever the number of goroutines.
const (
	streamLabels    = 0x6c61_6265_6c73_0000 // "labels"
	streamEdges     = 0x6564_6765_7300_0000 // "edges", + chunk index
	streamCentroids = 0x6365_6e74_7200_0000 // "centr"
	streamFeatures  = 0x6665_6174_0000_0000 // "feat", + chunk index
	streamSplit     = 0x7370_6c69_7400_0000 // "split"
)

// chunkRand returns the generator of one chunk of a parallel stream.
func chunkRand(seed, stream uint64, chunk int) *rand.PCG {
	return rand.NewPCG(seed, stream+uint64(chunk))
}

// parallelChunks runs f(chunk) for chunk in [0, chunks) on GOMAXPROCS
// goroutines. Work is handed out one chunk at a time, so skewed chunks
// balance themselves. A panic in f is raised on the caller (package par).
func parallelChunks(chunks int, f func(chunk int)) {
	workers := min(runtime.GOMAXPROCS(0), chunks)
	var next atomic.Int64
	var g par.Group
	for range workers {
		g.Go(func() {
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				f(c)
			}
		})
	}
	g.Wait()
}

// maxSampledEdges bounds the edges a generator draws: the COO arrays
// alone then take 32 GiB, beyond any machine these tests run on, and a
// config asking for more is a mistake better reported than attempted.
const maxSampledEdges = 1 << 32

// featureRowsPerChunk is the number of feature rows drawn from one stream.
const featureRowsPerChunk = 1 << 12

// classFeatures returns len(labels)×f features: each class has a random
// unit-length centroid, and a row is its class centroid plus independent
// N(0, noise²) noise in every coordinate (unlabeled vertices get noise
// only). With unit centroids the distance between two classes along the
// line joining their centroids is about √2/noise noise units whatever f
// is, so noise alone sets how separable the raw features are.
func classFeatures(labels []int32, classes, f int, noise float64, seed uint64) []float32 {
	n := len(labels)
	cen := classCentroids(classes, f, seed)
	x := make([]float32, n*f)
	chunks := (n + featureRowsPerChunk - 1) / featureRowsPerChunk
	parallelChunks(chunks, func(k int) {
		featureChunk(x[k*featureRowsPerChunk*f:], cen, labels, f, noise, seed, k)
	})
	return x
}

// classCentroids draws the random unit centroid of every class.
func classCentroids(classes, f int, seed uint64) []float64 {
	cen := make([]float64, classes*f)
	rng := rand.New(rand.NewPCG(seed, streamCentroids))
	for c := range classes {
		row := cen[c*f : (c+1)*f]
		var s float64
		for j := range row {
			row[j] = rng.NormFloat64()
			s += row[j] * row[j]
		}
		if s > 0 {
			inv := 1 / math.Sqrt(s)
			for j := range row {
				row[j] *= inv
			}
		}
	}
	return cen
}

// featureChunk writes the feature rows of chunk k (vertices
// [k·featureRowsPerChunk, ...)) to x, which starts at the chunk's first row.
func featureChunk(x []float32, cen []float64, labels []int32, f int, noise float64, seed uint64, k int) {
	n := len(labels)
	rng := rand.New(chunkRand(seed, streamFeatures, k))
	r0 := k * featureRowsPerChunk
	for i := r0; i < min(n, r0+featureRowsPerChunk); i++ {
		row := x[(i-r0)*f : (i-r0+1)*f]
		var c []float64
		if l := labels[i]; l >= 0 {
			c = cen[int(l)*f : (int(l)+1)*f]
		}
		for j := range row {
			v := noise * rng.NormFloat64()
			if c != nil {
				v += c[j]
			}
			row[j] = float32(v)
		}
	}
}

// randomSplit marks ⌊train·n⌋, ⌊val·n⌋ and ⌊test·n⌋ distinct vertices,
// chosen uniformly at random, as the train, validation and test sets.
func randomSplit(n int, train, val, test float64, seed uint64) (tr, va, te []bool) {
	rng := rand.New(rand.NewPCG(seed, streamSplit))
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	// Only the first nTrain+nVal+nTest positions are used: a partial
	// Fisher-Yates shuffle draws exactly those.
	nTr, nVa, nTe := int(train*float64(n)), int(val*float64(n)), int(test*float64(n))
	used := min(n, nTr+nVa+nTe)
	for i := 0; i < used; i++ {
		j := i + rng.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	tr, va, te = make([]bool, n), make([]bool, n), make([]bool, n)
	for k, v := range perm[:used] {
		switch {
		case k < nTr:
			tr[v] = true
		case k < nTr+nVa:
			va[v] = true
		default:
			te[v] = true
		}
	}
	return tr, va, te
}

// checkSplit checks the split fractions shared by the generator configs: a
// training split that is not empty, and at most every vertex in all.
func checkSplit(ck *tomlx.Checker, train, val, test float64) {
	ck.Number("train_fraction", train, "(]", 0, 1)
	ck.Number("val_fraction", val, "[]", 0, 1)
	ck.Number("test_fraction", test, "[]", 0, 1)
	if s := train + val + test; ck.Err == nil && s > 1+1e-9 {
		ck.Failf("train_fraction + val_fraction + test_fraction = %.4g: expected at most 1; lower one of them", s)
	}
}

// ConfigError is an invalid field of a generator config. Err names the
// field by its key in the job file's table ("nodes = 1: expected ..."), so
// that a caller reading a job file can prefix the table
// ("dataset.sbm.nodes = 1: ...") and say where the key was.
type ConfigError struct {
	// Table is "sbm" or "rmat".
	Table string
	Err   error
}

func (e *ConfigError) Error() string { return "dataset: " + e.Table + ": " + e.Err.Error() }

func (e *ConfigError) Unwrap() error { return e.Err }

// configError wraps err, if any, as a *ConfigError of table.
func configError(table string, err error) error {
	if err == nil {
		return nil
	}
	return &ConfigError{Table: table, Err: err}
}
