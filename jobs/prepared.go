package jobs

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/prepared"
	"scalegnn/spmm"
)

// setupPrepared is Setup for dataset.source = "prepared": every rank opens
// the dataset's metadata and reads only the blocks of its own shards
// (gcn.NewShards over a prepared.Dataset); no rank holds the whole graph.
// The permutation was applied at prepare time, so the job's [permute] must
// name the same scheme and seed.
func setupPrepared(cfg *Config, world collectives.Comm, g *grid.Grid, be spmm.Backend, threads int, log *zap.Logger) (*Job, error) {
	t0 := time.Now()
	ds, err := prepared.Open(cfg.Dataset.Path, prepared.LoadOptions{NormalizeFeatures: cfg.Dataset.NormalizeFeatures})
	if err != nil {
		return nil, err
	}
	m := ds.Meta
	if err := CheckPreparedPermutation(cfg, m); err != nil {
		return nil, err
	}
	if m.Train == 0 {
		return nil, fmt.Errorf("prepared dataset %s: the training mask is empty; a job needs training vertices", cfg.Dataset.Path)
	}
	mcfg := ModelConfigFor(cfg, &dataset.Graph{N: m.Nodes, F: m.Features, Classes: m.Classes})
	if err := mcfg.Validate(); err != nil {
		return nil, err
	}
	if world.Rank() == 0 {
		log.Info("prepared dataset", zap.String("path", cfg.Dataset.Path), zap.String("name", m.Name),
			zap.Int("vertices", m.Nodes), zap.Int64("nonzeros", m.NNZ), zap.Int("features", m.Features),
			zap.Int("classes", m.Classes), zap.Int("train", m.Train), zap.Int("val", m.Val), zap.Int("test", m.Test),
			zap.String("blocks", fmt.Sprintf("%dx%d", m.Blocks, m.Blocks)), zap.String("permutation", m.Permute.Scheme))
		st := prepared.MetaBalance(m)
		log.Info("nonzero balance of the stored blocks", zap.String("blocks", fmt.Sprintf("%dx%d", m.Blocks, m.Blocks)),
			zap.Float64("max_over_mean", st.Imbalance), zap.Int64("max_nnz", st.Max), zap.Float64("mean_nnz", st.Mean))
	}
	sh, err := gcn.NewShards(g, mcfg, ds)
	if err != nil {
		return nil, err
	}
	log.Info("shards loaded", zap.Duration("took", time.Since(t0)))
	mdl, err := gcn.NewModel(g, be, mcfg, OptimizerFor(cfg), sh)
	if err != nil {
		return nil, err
	}
	return newJob(cfg, world, g, mdl, threads, m.Nodes, log)
}

// CheckPreparedPermutation reports an error when the job's [permute]
// differs from the permutation a prepared dataset was written with (the
// seed counts only for single and double).
func CheckPreparedPermutation(cfg *Config, m *prepared.Meta) error {
	p := cfg.Permute
	if p.Scheme == m.Permute.Scheme && (p.Scheme == PermuteNone || p.Seed == m.Permute.Seed) {
		return nil
	}
	want := fmt.Sprintf("scheme = %q", m.Permute.Scheme)
	if m.Permute.Scheme != PermuteNone {
		want += fmt.Sprintf(", seed = %d", m.Permute.Seed)
	}
	return fmt.Errorf("%s: [permute] scheme = %q, seed = %d, but the prepared dataset %s was permuted at prepare time with %s: set [permute] %s in the job file, or prepare the dataset again with the permutation you want",
		cfg.label(), p.Scheme, p.Seed, cfg.Dataset.Path, want, want)
}

// RMATFor maps the job file's R-MAT table onto the generator's config.
func RMATFor(c DatasetConfig) dataset.RMATConfig {
	r := c.RMAT
	return dataset.RMATConfig{
		Scale: r.Scale, EdgeFactor: r.EdgeFactor, A: r.A, B: r.B, C: r.C, D: 1 - r.A - r.B - r.C,
		Classes: r.Classes, Features: r.Features, NoiseStd: 1,
		TrainFrac: r.TrainFraction, ValFrac: r.ValFraction, TestFrac: r.TestFraction,
		Seed: uint64(c.Seed),
	}
}
