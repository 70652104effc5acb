package jobs

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/neighbor"
	"scalegnn/sampler"
)

// neighborRun is one rank's state of a train.mode = "neighbor" job
// (package neighbor): every rank a data-parallel worker, grid d = ranks.
type neighborRun struct {
	replicated
	g       *grid.Grid
	world   collectives.Comm
	steps   int
	graph   *neighbor.Graph
	model   *neighbor.Model
	trainer *neighbor.Trainer
	builder *neighbor.Builder
	eval    *neighbor.Evaluator

	// ids are the vertex ids of this rank's rows (V0 to V1 of the
	// source's order 0): what predict writes them as.
	ids []int32

	pf          *sampler.Prefetcher[*neighbor.Batch]
	prefetch    bool
	wait, build time.Duration
}

var _ Method = (*neighborRun)(nil)

// setupNeighbor builds a neighbor-mode job: this rank's part of the graph
// under hybrid partitioning (the whole topology, its feature block), the
// model on the device, the batch builder and the evaluator. The training
// communicator is the grid's data-parallel one (all ranks), so the
// metrics' dp_bytes are the training bytes; evaluation gathers on the
// world communicator.
func setupNeighbor(s setup) (Method, error) {
	cfg, g := s.cfg, s.g
	t := cfg.Train
	ranks, rank := g.DP.Size(), g.DP.Rank()
	ng, err := neighbor.Load(s.src, s.mcfg.Classes, rank, ranks, featuresBF16(cfg))
	if err != nil {
		return nil, err
	}
	m, err := neighbor.NewModel(s.dev, s.mcfg, OptimizerFor(cfg))
	if err != nil {
		return nil, err
	}
	seeds, err := neighbor.NewSeeds(ng.Train, uint64(t.Seed), ranks, rank, t.BatchSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %v (dataset %s)", cfg.Label(), err, cfg.Dataset.Source)
	}
	nr := &neighborRun{replicated: replicated{comm: s.world, model: m}, g: g, world: s.world, graph: ng, model: m, trainer: neighbor.NewTrainer(g.DP, ng, m),
		builder: neighbor.NewBuilder(ng, seeds, s.mcfg.Layer, t.Fanouts, uint64(t.Seed)),
		eval:    neighbor.NewEvaluator(s.world, ng, m), steps: seeds.StepsPerEpoch(), prefetch: t.Prefetch,
		ids: s.src.Orders().Order[0][ng.V0:ng.V1]}
	if rank == 0 {
		s.log.Info("neighbor-sampling training", zap.Stringer("layer", s.mcfg.Layer), zap.Ints("fanouts", t.Fanouts),
			zap.Int("seeds_per_rank", t.BatchSize), zap.Int("ranks", ranks), zap.Int("steps_per_epoch", nr.steps),
			zap.Int("max_degree", ng.MaxDegree()), zap.Int("feature_rows_per_rank", ng.V1-ng.V0),
			zap.Int("parameters", m.NumParams()), zap.Bool("prefetch", t.Prefetch), zap.Bool("features_bf16", ng.BF16()))
	}
	return nr, nil
}

// In a neighbor-mode job's metrics, gemm_s is the model's device work,
// comm_s the feature exchange, dp_s the gradient all-reduce and optimizer
// step, dp_bytes the training bytes (exchange and gradients; comm_3d_bytes
// stays 0) and eval_bytes evaluation's all-gathers. A resume continues
// exactly: the seeds, samples and dropout are functions of the step.

func (nr *neighborRun) StepsPerEpoch() int { return nr.steps }

func (nr *neighborRun) Start(step, _ int) error {
	// Seeds, neighbours and dropout are functions of the step: the
	// prefetcher starts at the checkpoint's.
	nr.pf = sampler.NewPrefetcher(nr.builder.NewBatch, nr.builder.BuildInto, step, nr.prefetch)
	return nil
}

func (nr *neighborRun) BeginEpoch() {
	nr.trainer.Times = neighbor.Times{}
	nr.wait, nr.build = 0, 0
}

func (nr *neighborRun) Step(step int) (float64, error) {
	b, wait, took, err := nr.pf.Next()
	if err != nil {
		return 0, fmt.Errorf("sampling batch %d: %w", step, err)
	}
	nr.wait += wait
	nr.build += took
	loss, err := nr.trainer.TrainStep(b)
	if err != nil {
		return 0, err
	}
	nr.pf.Release(b)
	return loss, nil
}

func (nr *neighborRun) EndEpoch() {}

// Evaluate gathers on the world communicator: its bytes are the
// evaluation's own.
func (nr *neighborRun) Evaluate() (gcn.Accuracy, int64, error) {
	w0 := nr.world.Counters().TotalBytes()
	acc, err := nr.eval.Evaluate()
	return acc, nr.world.Counters().TotalBytes() - w0, err
}

func (nr *neighborRun) Counters() [2]int64 { return gridCounters(nr.g) }

func (nr *neighborRun) Split(time.Duration) Split {
	tt := nr.trainer.Times
	return Split{GEMM: tt.Compute, Comm: tt.Exchange, DP: tt.Grad, SampleWait: nr.wait, SampleBuild: nr.build}
}

func (nr *neighborRun) Close() {
	if nr.pf != nil {
		nr.pf.Close()
	}
	nr.builder.Close()
}

// Fingerprint is the one every other method computes (gcn's terms: the
// first layer's operator's nonzeros, and HashFeatures and HashLabels of
// each rank's own block in original vertex ids), so that a checkpoint
// moves between neighbor mode and the others: trained with sampling,
// evaluated or predicted on a grid, or the reverse.
func (nr *neighborRun) Fingerprint() (gcn.Fingerprint, error) {
	g := nr.graph
	// A SAGE layer's operator is D^-1 A: Â without its diagonal, which
	// dataset.NormalizeGCN gives every row.
	nnz := int64(g.Hat.NNZ())
	if nr.model.Cfg.Layer == gcn.SAGELayer {
		nnz -= int64(g.N)
	}
	lo, hi := g.V0, g.V1
	s := []int64{0, g.FeatureHash(nr.ids),
		gcn.HashLabels(nr.ids, g.Labels[lo:hi], g.Train[lo:hi], g.Val[lo:hi], g.Test[lo:hi])}
	if err := nr.world.AllReduceI64(s, collectives.Sum); err != nil {
		return gcn.Fingerprint{}, err
	}
	return gcn.Fingerprint{N: int64(g.N), NNZ: nnz, Features: uint64(s[1]), Labels: uint64(s[2])}, nil
}

func (nr *neighborRun) ModelConfig() gcn.Config { return nr.model.Cfg }
func (nr *neighborRun) GridName() string        { return nr.g.Shape.String() }

// Probabilities is the full-graph forward pass's softmax, this rank's
// block of vertices (every rank writes its own).
func (nr *neighborRun) Probabilities() (gcn.Block, error) {
	out, c, err := nr.eval.Output(nr.model.Cfg.Layers - 1)
	if err != nil {
		return gcn.Block{}, err
	}
	gcn.SoftmaxRows(out, c)
	return nr.block(out, c), nil
}

// Embeddings is hidden layer l's full-graph output (the ReLU's).
func (nr *neighborRun) Embeddings(l int) (gcn.Block, error) {
	if last := gcn.LastHidden(nr.model.Cfg); l < 0 || l > last {
		return gcn.Block{}, fmt.Errorf("neighbor: embeddings of layer %d: the model's hidden layers are 0 to %d", l, last)
	}
	out, w, err := nr.eval.Output(l)
	if err != nil {
		return gcn.Block{}, err
	}
	return nr.block(out, w), nil
}

// block is this rank's rows of a width-w output, by vertex id.
func (nr *neighborRun) block(data []float32, w int) gcn.Block {
	return gcn.Block{Vertices: nr.ids, Cols: w, C0: 0, C1: w, Data: data, Owner: true}
}

func (nr *neighborRun) Vertices() int { return nr.graph.N }
