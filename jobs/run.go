package jobs

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"scalegnn/checkpoint"
	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/jobfile"
	"scalegnn/permute"
	"scalegnn/plan"
	"scalegnn/spmm"
)

// Job is one rank's state of a training run, built by Setup: the job
// file, the grid and the training method (jobs/method.go) the file names.
type Job struct {
	Cfg    *jobfile.Config
	Grid   *grid.Grid
	method Method
	log    *zap.Logger
	world  collectives.Comm

	run *runState // the run OpenOutput started, for Train

	// Interrupt, when set, is asked after every step whether a signal
	// asks the job to stop; it returns the signal's name or "". The
	// ranks agree on it (checkStep).
	Interrupt func() string
	// resume is the checkpoint LoadCheckpoint restored (from resumeDir),
	// for the next Train to continue from; dataset the fingerprint,
	// computed once.
	resume    *checkpoint.Manifest
	resumeDir string
	dataset   *checkpoint.Dataset
	// live is the run OpenOutput started, until it ends: what a signal's
	// handler and the watchdog record in summary.json (aside.go).
	live atomic.Pointer[runState]
}

// Setup loads the data, builds this rank's part of it and the training
// method the job file names; it writes nothing (OpenOutput does, once
// every rank has set up). It does not communicate after the grid's
// communicators are split, so a failure on one rank can be agreed on by
// the caller before training starts.
//
// Every dataset source takes one path: a gcn.Source (a graph loaded or
// generated whole and permuted in memory, or a prepared dataset read shard
// by shard), the model configuration from the source's sizes, then the
// method's own setup (jobs/registry.go).
func Setup(cfg *jobfile.Config, world collectives.Comm, dev device.Device, log *zap.Logger) (*Job, error) {
	// train.precision is the device's: every method's products go through
	// it (device.BF16Products), here and nowhere else.
	dev = device.WithPrecision(dev, cfg.Train.Precision)
	shape := grid.Shape{D: cfg.Grid.D, X: cfg.Grid.X, Y: cfg.Grid.Y, Z: cfg.Grid.Z}
	if err := plan.ResolveEvalGrid(cfg); err != nil {
		return nil, err
	}
	g, err := grid.New(world, shape)
	if err != nil {
		return nil, err
	}
	// An isolated job's evaluation grid (jobs/isolated_eval.go) is split
	// here too, before anything can fail on one rank only.
	var evalGrid *grid.Grid
	var evalComm collectives.Comm
	switch {
	case cfg.Train.Mode == gcn.Isolated && cfg.Grappa.Layerwise():
		if evalComm, err = world.Split(0, world.Rank()); err != nil {
			return nil, err
		}
	case cfg.Train.Mode == gcn.Isolated && cfg.Grid.D > 1:
		if evalGrid, err = grid.New(world, cfg.Grappa.EvalShape()); err != nil {
			return nil, err
		}
	}
	var src gcn.Source
	if cfg.Dataset.Source == jobfile.SourcePrepared {
		src, err = preparedSource(cfg, world, log)
	} else {
		src, err = memorySource(cfg, world, shape, log)
	}
	if err != nil {
		return nil, err
	}
	mcfg := ModelConfigFor(cfg, src.Sizes())
	if err := mcfg.Validate(); err != nil {
		return nil, err
	}
	m, err := registry[cfg.Method()].setup(setup{cfg: cfg, g: g, evalGrid: evalGrid, evalComm: evalComm, src: src, mcfg: mcfg, world: world, dev: dev, log: log})
	if err != nil {
		return nil, err
	}
	if ds, ok := src.(interface{ EndLoad() }); ok {
		// Reads from here on (out-of-core partitions, layer-wise
		// evaluation) are the steps' own work, not the load's.
		ds.EndLoad()
	}
	// What the load freed (the whole graph a memory source holds, unless
	// the method keeps it, and the generator's and the shards' temporary
	// buffers) goes back to the OS now, before training takes its
	// arenas: Go would keep it in its heap and add training on top. At
	// R-MAT 22 on one rank in bf16 the peak RSS went from 14.03 GB (in
	// the first epoch) to 8.24 GB (the load's; the epoch's 8.11 GB).
	debug.FreeOSMemory()
	return &Job{Cfg: cfg, Grid: g, method: m, log: log, world: world}, nil
}

// memorySource loads or generates the job's graph whole, permutes it as
// [permute] says and returns it as a Source; rank 0 logs its nonzero
// balance. Each stage is a piece of the load for the watchdog.
func memorySource(cfg *jobfile.Config, world collectives.Comm, shape grid.Shape, log *zap.Logger) (gcn.Source, error) {
	progress := loadProgress(world)
	t0 := time.Now()
	graph, err := jobfile.LoadGraph(cfg.Dataset)
	if err != nil {
		return nil, err
	}
	progress("the dataset " + cfg.Dataset.Source)
	log.Info("dataset loaded", zap.String("source", cfg.Dataset.Source), zap.Int("vertices", graph.N),
		zap.Int("edges", graph.Adj.NNZ()/2), zap.Int("features", graph.F), zap.Int("classes", graph.Classes),
		zap.Int("train", dataset.Count(graph.Train)), zap.Int("val", dataset.Count(graph.Val)),
		zap.Int("test", dataset.Count(graph.Test)), zap.Duration("took", time.Since(t0)))
	if dataset.Count(graph.Train) == 0 {
		return nil, fmt.Errorf("dataset %s: the training mask is empty; a job needs training vertices", cfg.Dataset.Source)
	}
	perms := permute.New(graph.N, cfg.Permute.Scheme, uint64(cfg.Permute.Seed))
	adj := dataset.NormalizeGCN(graph.Adj)
	progress("the permutation and the normalized adjacency")
	if world.Rank() == 0 {
		logBalance(log, adj, perms, shape, cfg.Model.Layers)
		progress("the nonzero balance")
	}
	return gcn.NewMemorySource(&gcn.Graph{
		Adj: adj, Features: graph.Features, Labels: graph.Labels,
		Train: graph.Train, Val: graph.Val, Test: graph.Test, Classes: graph.Classes,
	}, gcn.NewOrders(graph.N, perms.P1, perms.P2))
}

// featuresBF16 says whether a gcn model of this job holds its features
// in bfloat16 (gcn.FeaturesInBF16): read so from the source
// (gcn.ShardOptions.FeaturesBF16), or rounded where an isolated partition
// is built in memory (chunkReader).
func featuresBF16(cfg *jobfile.Config) bool { return gcn.FeaturesInBF16(cfg.Train.Precision) }

// RunOptions maps the job file onto the model's run-time options.
func RunOptions(cfg *jobfile.Config) gcn.Options {
	return gcn.Options{BF16: cfg.Train.CommDtype == collectives.BF16, Overlap: cfg.Train.Overlap}
}

// ModelConfigFor maps the job file onto the model for a graph of the given
// sizes.
func ModelConfigFor(cfg *jobfile.Config, s gcn.Sizes) gcn.Config {
	m := cfg.Model
	return gcn.Config{
		Features: s.Features, Hidden: m.Hidden, Classes: s.Classes, Layers: m.Layers, Dropout: m.Dropout,
		InputProjection: m.InputProjection, OutputHead: m.OutputHead,
		Norm: m.Norm == gcn.RMSNorm, Residual: m.Residual, Layer: m.Layer, Seed: uint64(cfg.Train.Seed),
		Heads: m.Heads, OutputHeads: m.OutputHeads,
	}
}

// OptimizerFor maps the job file onto the optimizer.
func OptimizerFor(cfg *jobfile.Config) gcn.Optimizer {
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
