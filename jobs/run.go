package jobs

import (
	"encoding/json"
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
	m.Threads = threads
	return &Job{Cfg: cfg, Grid: g, Model: m, log: log, world: world}, nil
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
	seen := map[[2]int]bool{}
	for l := 0; l < layers; l++ {
		key := [2]int{l % 3, l % 2}
		if seen[key] {
			continue
		}
		seen[key] = true
		p, _, r := grid.Rotation(l)
		rows, cols := perms.P1, perms.P2
		if l%2 == 1 {
			rows, cols = cols, rows
		}
		st := permute.BalancePermuted(adj, rows, cols, s.Size(r), s.Size(p))
		log.Info("nonzero balance", zap.Int("layer", l), zap.String("blocks", fmt.Sprintf("%dx%d", s.Size(r), s.Size(p))),
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
}

// Train runs the epochs: one full-graph step each, evaluation every
// eval_every epochs and at the end, timings reduced over all ranks, and on
// rank 0 the log lines, the metrics file and summary.json.
func (j *Job) Train() (*Result, error) {
	cfg, m, rank0 := j.Cfg, j.Model, j.world.Rank() == 0
	var mw *MetricsWriter
	if rank0 {
		var err error
		if mw, err = CreateMetrics(cfg.MetricsPath()); err != nil {
			return nil, err
		}
		defer mw.Close()
	}
	res := &Result{Epochs: cfg.Train.Epochs, Grid: j.Grid.Shape.String(), Ranks: j.world.Size(), Permutation: cfg.Permute.Scheme, BestEpoch: -1}
	start := time.Now()
	for epoch := 1; epoch <= cfg.Train.Epochs; epoch++ {
		m.Times = gcn.Times{}
		t0 := time.Now()
		loss, err := m.TrainStep(epoch - 1)
		if err != nil {
			return nil, fmt.Errorf("epoch %d: %w", epoch, err)
		}
		em := EpochMetrics{Epoch: epoch, Loss: loss}
		if epoch%cfg.Train.EvalEvery == 0 || epoch == cfg.Train.Epochs {
			acc, err := m.Evaluate()
			if err != nil {
				return nil, fmt.Errorf("epoch %d evaluation: %w", epoch, err)
			}
			em.SetAccuracies(acc.Train, acc.Val, acc.Test)
			res.Final = acc
			if acc.Val > res.BestValAcc || res.BestEpoch < 0 {
				res.BestValAcc, res.TestAtBest, res.BestEpoch = acc.Val, acc.Test, epoch
			}
		}
		elapsed := time.Since(t0)
		if err := j.reduceTimes(&em, elapsed, m.Times); err != nil {
			return nil, err
		}
		res.FinalLoss = loss
		if rank0 {
			j.log.Info("epoch", EpochFields(em)...)
			if err := mw.Write(em); err != nil {
				return nil, err
			}
		}
	}
	res.TrainSec = time.Since(start).Seconds()
	res.MeanEpochS = res.TrainSec / float64(cfg.Train.Epochs)
	if rank0 {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(filepath.Join(cfg.Output.Dir, "summary.json"), append(b, '\n'), 0o644); err != nil {
			return nil, fmt.Errorf("writing summary: %w", err)
		}
		j.log.Info("done", zap.Float64("test_acc", res.Final.Test), zap.Float64("val_acc", res.Final.Val),
			zap.Float64("train_acc", res.Final.Train), zap.Float64("mean_epoch_s", res.MeanEpochS),
			zap.String("metrics", mw.Path()))
	}
	return res, nil
}

// reduceTimes fills the max and mean over ranks of the epoch's time split.
func (j *Job) reduceTimes(em *EpochMetrics, elapsed time.Duration, t gcn.Times) error {
	other := elapsed - t.SpMM - t.GEMM - t.Comm
	vals := []float64{t.SpMM.Seconds(), t.GEMM.Seconds(), t.Comm.Seconds(), other.Seconds(), elapsed.Seconds()}
	mx := append([]float64(nil), vals...)
	if err := j.world.AllReduceF64(mx, collectives.Max); err != nil {
		return err
	}
	if err := j.world.AllReduceF64(vals, collectives.Sum); err != nil {
		return err
	}
	n := float64(j.world.Size())
	em.SpMMSecMax, em.GEMMSecMax, em.CommSecMax, em.OtherSecMax, em.EpochSec = mx[0], mx[1], mx[2], mx[3], mx[4]
	em.SpMMSecMean, em.GEMMSecMean, em.CommSecMean, em.OtherSecMean = vals[0]/n, vals[1]/n, vals[2]/n, vals[3]/n
	return nil
}
