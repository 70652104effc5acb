package plan

import (
	"fmt"
	"math"

	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/method"
	"scalegnn/perfmodel"
	"scalegnn/prepared"
	"scalegnn/sampler"
)

// GraphSize is what the performance model needs to know about a job's
// graph: vertices, nonzeros of the normalised adjacency (self loops
// included), feature width and classes.
type GraphSize struct {
	N                 int
	NNZ               int64
	Features, Classes int
	// How says where the numbers come from (loaded, or computed from the
	// generator's parameters).
	How string
	// Sharded is true for a prepared dataset: every rank reads only its
	// own shards, so the whole graph never sits in one rank's memory.
	Sharded bool
	// FeatureBytes is the bytes a feature takes on disk when known (a
	// prepared dataset's feature_dtype: 4, or 2 for bfloat16); 0
	// otherwise (the model takes 4).
	FeatureBytes int
}

// EstimateGraphSize returns the size of the job's graph without building
// it when it can: a stochastic block model has N vertices and about
// N·avg_degree + N nonzeros; an R-MAT graph's expected nonzeros follow from
// its parameters (expectedRMATNonzeros). Built-in and Planetoid datasets
// are small and are loaded.
func EstimateGraphSize(c jobfile.DatasetConfig) (GraphSize, error) {
	switch c.Source {
	case jobfile.SourcePrepared:
		m, err := prepared.ReadMeta(c.Path)
		if err != nil {
			return GraphSize{}, err
		}
		return GraphSize{N: m.Nodes, NNZ: m.NNZ, Features: m.Features, Classes: m.Classes, Sharded: true,
			FeatureBytes: m.FeatureBytes(), How: "prepared dataset metadata"}, nil
	case jobfile.SourceSBM:
		s := c.SBM
		nnz := expectedSBMNonzeros(s.N, s.Classes, s.AvgDegree, s.Homophily)
		return GraphSize{N: s.N, NNZ: int64(math.Round(nnz)) + int64(s.N), Features: s.Features, Classes: s.Classes,
			How: "expected nonzeros of dataset.sbm's generator"}, nil
	case jobfile.SourceRMAT:
		r := c.RMAT
		n := 1 << r.Scale
		nnz := expectedRMATNonzeros(r.Scale, r.EdgeFactor, r.A, r.B, r.C)
		return GraphSize{N: n, NNZ: int64(math.Round(nnz)) + int64(n), Features: r.Features, Classes: r.Classes,
			How: "expected nonzeros of dataset.rmat's generator"}, nil
	}
	g, err := jobfile.LoadGraph(c)
	if err != nil {
		return GraphSize{}, err
	}
	return GraphSize{N: g.N, NNZ: int64(dataset.NormalizeGCN(g.Adj).NNZ()), Features: g.F, Classes: g.Classes, How: "loaded"}, nil
}

// expectedSBMNonzeros is the expected number of off-diagonal nonzeros of
// dataset.SBM's graph: m = round(N·avg/2) samples, a fraction h inside a
// class of s = N/C vertices (both ends uniform in it, so self loops occur),
// the rest between a uniform vertex and a uniform vertex of another class;
// duplicates and self loops are dropped and the rest mirrored.
func expectedSBMNonzeros(n, classes int, avgDegree, homophily float64) float64 {
	m := math.Round(float64(n) * avgDegree / 2)
	nn, c := float64(n), float64(classes)
	if classes == 1 {
		homophily = 1
	}
	s := nn / c
	distinct := func(pairs, perSample, samples float64) float64 {
		if pairs <= 0 || perSample <= 0 {
			return 0
		}
		return pairs * -math.Expm1(samples*math.Log1p(-math.Min(perSample, 1)))
	}
	in := distinct(c*s*(s-1)/2, 2/(c*s*s), m*homophily)
	var out float64
	if classes > 1 {
		out = distinct(c*(c-1)/2*s*s, 2/(nn*(c-1)*s), m*(1-homophily))
	}
	return 2 * (in + out)
}

// expectedRMATNonzeros is the expected number of off-diagonal nonzeros of
// the symmetrised, deduplicated R-MAT graph: an ordered pair (u, v), u ≠ v,
// is a nonzero unless none of the m = edgeFactor·2^scale samples hit (u, v)
// or (v, u). A cell whose path takes quadrants a, b, c, d ka, kb, kc, kd
// times has probability a^ka b^kb c^kc d^kd and its mirror swaps kb and
// kc; there are scale!/(ka! kb! kc! kd!) such cells, so the sum runs over
// the O(scale³) compositions, not the 4^scale cells.
func expectedRMATNonzeros(scale, edgeFactor int, a, b, c float64) float64 {
	d := 1 - a - b - c
	m := float64(edgeFactor) * math.Exp2(float64(scale))
	lf := func(k int) float64 { v, _ := math.Lgamma(float64(k + 1)); return v }
	logp := func(q float64, k int) float64 {
		if k == 0 {
			return 0
		}
		if q <= 0 {
			return math.Inf(-1)
		}
		return float64(k) * math.Log(q)
	}
	var total float64
	for ka := 0; ka <= scale; ka++ {
		for kb := 0; kb <= scale-ka; kb++ {
			for kc := 0; kc <= scale-ka-kb; kc++ {
				kd := scale - ka - kb - kc
				if kb+kc == 0 {
					continue // the diagonal: self loops are dropped
				}
				base := logp(a, ka) + logp(d, kd)
				p := math.Exp(base+logp(b, kb)+logp(c, kc)) + math.Exp(base+logp(b, kc)+logp(c, kb))
				if p >= 1 {
					p = 1
				}
				hit := -math.Expm1(m * math.Log1p(-p))
				cells := math.Exp(lf(scale) - lf(ka) - lf(kb) - lf(kc) - lf(kd))
				total += cells * hit
			}
		}
	}
	return total
}

// PerfJob describes a job to the performance model.
func PerfJob(cfg *jobfile.Config, gs GraphSize) perfmodel.Job {
	m := cfg.Model
	j := perfmodel.Job{
		N: gs.N, NNZ: gs.NNZ, Features: gs.Features, Hidden: m.Hidden, Classes: gs.Classes, Layers: m.Layers,
		InputProjection: m.InputProjection, OutputHead: m.OutputHead, Norm: m.Norm == gcn.RMSNorm, Residual: m.Residual,
		Layer: m.Layer, Heads: m.Heads, OutputHeads: m.OutputHeads, Dropout: m.Dropout, EvalEvery: cfg.Train.EvalEvery, ShardedLoad: gs.Sharded, FeatureBytes: gs.FeatureBytes,
		Mode: cfg.Train.Mode, CommDType: cfg.Train.CommDtype, Precision: cfg.Train.Precision, Permutation: cfg.Permute.Scheme,
		NoOverlap: !cfg.Train.Overlap,
	}
	if t := cfg.Train; t.Mode == gcn.MiniBatch {
		if b, err := sampler.BatchSize(gs.N, t.BatchSize, t.BatchRatio); err == nil {
			j.BatchSize = b
		}
		j.StepsPerEpoch = t.StepsPerEpoch
	}
	j.Neighbor = neighborPerfJob(cfg, gs)
	j.Isolated = isolatedPerfJob(cfg, j.Neighbor.TrainVertices)
	return j
}

// PerfChoices lists the algorithms the performance model ranks for the
// job (perfmodel.PredictAll): a full-graph job lists Plexus's 3D grids and
// CAGNET's 1.5D arrangements, unless train.algorithm names one of them
// (then only it) or the job lies outside what package cagnet trains
// (CAGNETScope: then 3D only); the mini-batch-type modes (minibatch,
// neighbor, isolated) list each other: the Plexus 4D grids, neighbor
// sampling and isolated training side by side, each with the job's keys
// where it sets them and defaults otherwise, and a mini-batch job also
// the 1.5D arrangements with every Gd (cagnet.MiniBatch) under the same
// rule as a full-graph job's.
func PerfChoices(cfg *jobfile.Config) perfmodel.Choices {
	t := cfg.Train
	if t.Mode == gcn.MiniBatch {
		switch t.Algorithm {
		case method.Plexus:
			return perfmodel.Choices{method.Plexus: true, method.NeighborSampling: true, method.IsolatedPartitions: true}
		case method.CAGNET:
			return perfmodel.Choices{method.CAGNET: true}
		}
		return perfmodel.Choices{method.Plexus: true, method.NeighborSampling: true, method.IsolatedPartitions: true, method.CAGNET: jobfile.CAGNETScope(cfg) == nil}
	}
	if t.Mode != gcn.FullGraph {
		return perfmodel.Choices{method.Plexus: true, method.NeighborSampling: true, method.IsolatedPartitions: true}
	}
	switch t.Algorithm {
	case method.Plexus:
		return perfmodel.Choices{method.Plexus: true}
	case method.CAGNET:
		return perfmodel.Choices{method.CAGNET: true}
	}
	return perfmodel.Choices{method.Plexus: true, method.CAGNET: jobfile.CAGNETScope(cfg) == nil}
}

// OwnChoices lists the configurations that train the job as it is
// written: what grid.auto chooses among and what `perfmodel predict`
// recommends from. For a full-graph job that is PerfChoices (3D grids and
// 1.5D arrangements compute the same training); for the mini-batch-type
// modes it is the job's own mode only: neighbor sampling, isolated
// training and 4D mini-batches train differently, and choosing where a job
// runs must not change what it trains. A mini-batch job's 4D grids and
// 1.5D arrangements train the same batches (one sampler rule), so it may
// take either, unless train.algorithm names one.
func OwnChoices(cfg *jobfile.Config) perfmodel.Choices {
	switch cfg.Train.Mode {
	case gcn.FullGraph:
		return PerfChoices(cfg)
	case gcn.MiniBatch:
		c := PerfChoices(cfg)
		return perfmodel.Choices{method.Plexus: c[method.Plexus], method.CAGNET: c[method.CAGNET]}
	case gcn.Neighbor:
		return perfmodel.Choices{method.NeighborSampling: true}
	case gcn.Isolated:
		return perfmodel.Choices{method.IsolatedPartitions: true}
	}
	return perfmodel.Choices{method.Plexus: true}
}

// ChooseGrid predicts every configuration of every algorithm OwnChoices
// lists for ranks ranks and returns the predictions, best first, and the
// best one that fits in memPerRank (0: no limit).
func ChooseGrid(cfg *jobfile.Config, gs GraphSize, m *perfmodel.Machine, ranks, ranksPerNode int, memPerRank int64) ([]perfmodel.Prediction, perfmodel.Prediction, error) {
	preds, err := perfmodel.PredictAll(PerfJob(cfg, gs), m, perfmodel.Options{Ranks: ranks, RanksPerNode: ranksPerNode, MemPerRank: memPerRank}, OwnChoices(cfg))
	if err != nil {
		return nil, perfmodel.Prediction{}, fmt.Errorf("%s: choosing the grid: %w", cfg.Label(), err)
	}
	best, err := perfmodel.Best(preds, memPerRank)
	if err != nil {
		return preds, best, fmt.Errorf("%s: choosing the grid: %w", cfg.Label(), err)
	}
	return preds, best, nil
}
