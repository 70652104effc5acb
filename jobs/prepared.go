package jobs

import (
	"fmt"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/permute"
	"scalegnn/prepared"
)

// preparedSource opens a prepared dataset (dataset.source = "prepared") as
// the Source every rank reads only the blocks of its own shards from; no
// rank holds the whole graph. The permutation was applied at prepare time,
// so the job's [permute] must name the same scheme and seed.
func preparedSource(cfg *jobfile.Config, world collectives.Comm, log *zap.Logger) (gcn.Source, error) {
	ds, err := prepared.Open(cfg.Dataset.Path, prepared.LoadOptions{
		NormalizeFeatures: cfg.Dataset.NormalizeFeatures,
		Progress:          loadProgress(world), // each file read, for the watchdog
	})
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
	if world.Rank() == 0 {
		log.Info("prepared dataset", zap.String("path", cfg.Dataset.Path), zap.String("name", m.Name),
			zap.Int("vertices", m.Nodes), zap.Int64("nonzeros", m.NNZ), zap.Int("features", m.Features),
			zap.Int("classes", m.Classes), zap.Int("train", m.Train), zap.Int("val", m.Val), zap.Int("test", m.Test),
			zap.String("blocks", fmt.Sprintf("%dx%d", m.Blocks, m.Blocks)), zap.Stringer("permutation", m.Permute.Scheme))
		st := prepared.MetaBalance(m)
		log.Info("nonzero balance of the stored blocks", zap.String("blocks", fmt.Sprintf("%dx%d", m.Blocks, m.Blocks)),
			zap.Float64("max_over_mean", st.Imbalance), zap.Int64("max_nnz", st.Max), zap.Float64("mean_nnz", st.Mean))
	}
	return ds, nil
}

// CheckPreparedPermutation reports an error when the job's [permute]
// differs from the permutation a prepared dataset was written with (the
// seed counts only for single and double).
func CheckPreparedPermutation(cfg *jobfile.Config, m *prepared.Meta) error {
	p := cfg.Permute
	if p.Scheme == m.Permute.Scheme && (p.Scheme == permute.None || p.Seed == m.Permute.Seed) {
		return nil
	}
	want := fmt.Sprintf("scheme = %q", m.Permute.Scheme)
	if m.Permute.Scheme != permute.None {
		want += fmt.Sprintf(", seed = %d", m.Permute.Seed)
	}
	return fmt.Errorf("%s: [permute] scheme = %q, seed = %d, but the prepared dataset %s was permuted at prepare time with %s: set [permute] %s in the job file, or prepare the dataset again with the permutation you want",
		cfg.Label(), p.Scheme, p.Seed, cfg.Dataset.Path, want, want)
}
