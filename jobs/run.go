package jobs

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// Job is one rank's state of a training run, built by Setup.
type Job struct {
	Cfg   *Config
	Grid  *grid.Grid
	Model *gcn.Model
	log   *zap.Logger
	world collectives.Comm

	// Mini-batch training: the batch builder over the model's shards and
	// the steps per epoch (1 in full-graph training).
	batches *gcn.BatchBuilder
	steps   int
}

// Setup loads the data, builds this rank's shards and the model. It does
// not communicate after the grid's communicators are split, so a failure on
// one rank can be agreed on by the caller before training starts.
func Setup(cfg *Config, world collectives.Comm, be spmm.Backend, threads int, log *zap.Logger) (*Job, error) {
	shape := grid.Shape{D: cfg.Grid.D, X: cfg.Grid.X, Y: cfg.Grid.Y, Z: cfg.Grid.Z}
	g, err := grid.New(world, shape)
	if err != nil {
		return nil, err
	}
	if world.Rank() == 0 {
		if err := writeEffectiveConfig(cfg); err != nil {
			return nil, err
		}
	}
	if cfg.Dataset.Source == SourcePrepared {
		return setupPrepared(cfg, world, g, be, threads, log)
	}
	t0 := time.Now()
	graph, err := LoadGraph(cfg.Dataset)
	if err != nil {
		return nil, err
	}
	log.Info("dataset loaded", zap.String("source", cfg.Dataset.Source), zap.Int("vertices", graph.N),
		zap.Int("edges", graph.Adj.NNZ()/2), zap.Int("features", graph.F), zap.Int("classes", graph.Classes),
		zap.Int("train", dataset.Count(graph.Train)), zap.Int("val", dataset.Count(graph.Val)),
		zap.Int("test", dataset.Count(graph.Test)), zap.Duration("took", time.Since(t0)))

	if dataset.Count(graph.Train) == 0 {
		return nil, fmt.Errorf("dataset %s: the training mask is empty; a job needs training vertices", cfg.Dataset.Source)
	}
	mcfg := ModelConfigFor(cfg, graph)
	if err := mcfg.Validate(); err != nil {
		return nil, err
	}
	scheme, err := permute.ParseScheme(cfg.Permute.Scheme)
	if err != nil {
		return nil, fmt.Errorf("permute.scheme: %w", err)
	}
	perms := permute.New(graph.N, scheme, uint64(cfg.Permute.Seed))
	adj := dataset.NormalizeGCN(graph.Adj)
	if world.Rank() == 0 {
		logBalance(log, adj, perms, shape, mcfg.Layers)
	}
	m, err := gcn.Build(g, be, mcfg, OptimizerFor(cfg), &gcn.Graph{
		Adj: adj, Features: graph.Features, Labels: graph.Labels,
		Train: graph.Train, Val: graph.Val, Test: graph.Test,
	}, gcn.NewOrders(graph.N, perms.P1, perms.P2))
	if err != nil {
		return nil, err
	}
	return newJob(cfg, world, g, m, threads, graph.N, log)
}

// newJob finishes Setup once the model is built, whatever the dataset
// source: run-time options, and for mini-batch training the batch builder
// over the model's shards of the n-vertex graph.
func newJob(cfg *Config, world collectives.Comm, g *grid.Grid, m *gcn.Model, threads, n int, log *zap.Logger) (*Job, error) {
	m.Threads = threads
	m.Options = gcn.Options{BF16: cfg.Train.CommDtype == CommBF16, Overlap: cfg.Train.Overlap}
	j := &Job{Cfg: cfg, Grid: g, Model: m, log: log, world: world, steps: 1}
	if cfg.Train.Mode == ModeMiniBatch {
		if err := j.setupBatches(n); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// writeEffectiveConfig creates the output directory and stores the job as
// it ran (defaults filled in) as config.toml beside the metrics.
func writeEffectiveConfig(cfg *Config) error {
	if err := os.MkdirAll(cfg.Output.Dir, 0o755); err != nil {
		return fmt.Errorf("output.dir: %w", err)
	}
	path := filepath.Join(cfg.Output.Dir, "config.toml")
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("output.dir: %w", err)
	}
	if err := cfg.WriteTOML(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// ModelConfigFor maps the job file onto the model for the given graph.
func ModelConfigFor(cfg *Config, g *dataset.Graph) gcn.Config {
	m := cfg.Model
	return gcn.Config{
		Features: g.F, Hidden: m.Hidden, Classes: g.Classes, Layers: m.Layers, Dropout: m.Dropout,
		InputProjection: m.InputProjection, OutputHead: m.OutputHead,
		Norm: m.Norm == NormRMS, Residual: m.Residual, Seed: uint64(cfg.Train.Seed),
	}
}

// OptimizerFor maps the job file onto the optimizer.
func OptimizerFor(cfg *Config) gcn.Optimizer {
	o := cfg.Optimizer
	return gcn.Optimizer{Name: o.Name, LR: o.LR, WeightDecay: o.WeightDecay, Beta1: o.Beta1, Beta2: o.Beta2, Epsilon: o.Eps}
}

// logBalance reports max/mean nonzeros over the 2D blocks of every distinct
// adjacency shard layout (Plexus §5.1), the load imbalance of the SpMMs.
func logBalance(log *zap.Logger, adj *spmm.CSR, perms *permute.Perms, s grid.Shape, layers int) {
	two := perms.Scheme == permute.Double
	orders := [2][]int32{perms.P1, perms.P2}
	for _, sh := range grid.ShardsOf(layers, two) {
		r, p := sh.Axes()
		st := permute.BalancePermuted(adj, orders[sh.RowOrder()], orders[sh.ColOrder()], s.Size(r), s.Size(p))
		log.Info("nonzero balance", zap.Int("layer", sh.FirstUse(two)), zap.String("blocks", fmt.Sprintf("%dx%d", s.Size(r), s.Size(p))),
			zap.String("permutation", perms.Scheme.String()), zap.Float64("max_over_mean", st.Imbalance),
			zap.Int64("max_nnz", st.Max), zap.Float64("mean_nnz", st.Mean))
	}
}

// Result summarises a finished run; rank 0 writes it as summary.json.
type Result struct {
	Epochs      int          `json:"epochs"`
	FinalLoss   float64      `json:"final_loss"`
	Final       gcn.Accuracy `json:"final_accuracy"`
	BestValAcc  float64      `json:"best_val_acc"`
	TestAtBest  float64      `json:"test_acc_at_best_val"`
	BestEpoch   int          `json:"best_epoch"`
	TrainSec    float64      `json:"train_s"`
	MeanEpochS  float64      `json:"mean_epoch_s"`
	Grid        string       `json:"grid"`
	Ranks       int          `json:"ranks"`
	Permutation string       `json:"permutation"`
	Mode        string       `json:"mode"`
	// StepsPerEpoch is 1 in full-graph training.
	StepsPerEpoch int `json:"steps_per_epoch"`
}
