package dataset

import "runtime"

// The functions below produce the same graph as RMAT(cfg) without holding
// it, for writing a large R-MAT graph to disk: RMATEdges streams the
// sampled edges, RMATVertices returns the labels and the split (O(N)), and
// RMATFeatures streams the feature rows. Batches are drawn in parallel and
// handed over one at a time, in a fixed order; their slices are reused
// after the callback returns. Memory is O(N) plus a few batches.

// RMATEdges hands the sampled edges of RMAT(cfg) to emit: directed, with
// the duplicates and self loops RMAT drops when it symmetrises.
func RMATEdges(cfg RMATConfig, emit func(us, vs []int32) error) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	n := 1 << cfg.Scale
	m := cfg.EdgeFactor * n
	smp := newRMATSampler(cfg)
	chunks := (m + edgesPerChunk - 1) / edgesPerChunk
	par := runtime.GOMAXPROCS(0)
	us, vs := make([]int32, par*edgesPerChunk), make([]int32, par*edgesPerChunk)
	for k0 := 0; k0 < chunks; k0 += par {
		k1 := min(chunks, k0+par)
		parallelChunks(k1-k0, func(i int) {
			k := k0 + i
			lo, hi := k*edgesPerChunk, min(m, (k+1)*edgesPerChunk)
			off := i * edgesPerChunk
			smp.chunk(k, us[off:off+hi-lo], vs[off:off+hi-lo])
		})
		cnt := min(m, k1*edgesPerChunk) - k0*edgesPerChunk
		if err := emit(us[:cnt], vs[:cnt]); err != nil {
			return err
		}
	}
	return nil
}

// RMATVertices returns the labels and the split masks of RMAT(cfg).
func RMATVertices(cfg RMATConfig) (labels []int32, train, val, test []bool, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, nil, nil, err
	}
	labels, train, val, test = rmatVertices(cfg)
	return labels, train, val, test, nil
}

// RMATFeatures hands the feature rows of RMAT(cfg) to emit in vertex order;
// labels must be RMATVertices(cfg)'s.
func RMATFeatures(cfg RMATConfig, labels []int32, emit func(v0 int, rows []float32) error) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	n, f := len(labels), cfg.Features
	cen := classCentroids(cfg.Classes, f, cfg.Seed)
	chunks := (n + featureRowsPerChunk - 1) / featureRowsPerChunk
	par := runtime.GOMAXPROCS(0)
	x := make([]float32, par*featureRowsPerChunk*f)
	for k0 := 0; k0 < chunks; k0 += par {
		k1 := min(chunks, k0+par)
		parallelChunks(k1-k0, func(i int) {
			featureChunk(x[i*featureRowsPerChunk*f:], cen, labels, f, cfg.NoiseStd, cfg.Seed, k0+i)
		})
		r0, r1 := k0*featureRowsPerChunk, min(n, k1*featureRowsPerChunk)
		if err := emit(r0, x[:(r1-r0)*f]); err != nil {
			return err
		}
	}
	return nil
}
