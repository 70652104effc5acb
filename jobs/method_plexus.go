package jobs

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"scalegnn/checkpoint"
	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/sampler"
)

var _ Method = (*plexus)(nil)

// plexus trains a sharded gcn.Model on the 4D grid: the full graph in one
// step per epoch (Plexus, train.mode = "fullgraph"), or uniform
// mini-batches, each replica its own (ScaleGNN, train.mode =
// "minibatch"). Isolated training (method_isolated.go) is a plexus whose
// batches are partitions.
type plexus struct {
	g     *grid.Grid
	world collectives.Comm
	m     *gcn.Model
	steps int

	// Mini-batch training: the builder, and the prefetcher Start makes
	// over it (nil in full-graph training).
	batches     *gcn.BatchBuilder
	pf          *sampler.Prefetcher[*gcn.Shards]
	prefetch    bool
	wait, build time.Duration
}

// setupPlexus builds the model on this rank's shards of src and, in
// mini-batch training, the batch builder over them.
func setupPlexus(s setup) (Method, error) {
	cfg, g := s.cfg, s.g
	// Mini-batch and isolated training cut their batches from the full
	// graph and only evaluate on it: no transposes.
	o := gcn.ShardOptions{EvalOnly: cfg.Train.Mode != gcn.FullGraph, FeaturesBF16: featuresBF16(cfg)}
	t0 := time.Now()
	sh, err := gcn.NewShardsWith(g, s.mcfg, s.src, o)
	if err != nil {
		return nil, err
	}
	loadProgress(s.world)("the shards")
	s.log.Info("shards loaded", zap.Duration("took", time.Since(t0)), zap.Int64("shard_bytes", sh.Bytes()))
	m, err := gcn.NewModel(g, s.dev, s.mcfg, OptimizerFor(cfg), sh, RunOptions(cfg))
	if err != nil {
		return nil, err
	}
	p := &plexus{g: g, world: s.world, m: m, steps: 1, prefetch: cfg.Train.Prefetch}
	if cfg.Train.Mode == gcn.MiniBatch {
		if err := p.setupBatches(s); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// setupBatches checks the batch size against the graph and builds the
// mini-batch builder over the model's shards.
func (p *plexus) setupBatches(s setup) error {
	t := s.cfg.Train
	n := s.src.Sizes().N
	b, err := batchSizeFor(s.cfg, n)
	if err != nil {
		return err
	}
	p.batches, err = gcn.NewBatchBuilder(p.g, p.m.Cfg, p.m.Shards(), uint64(t.Seed), b)
	if err != nil {
		return err
	}
	p.steps = t.StepsPerEpoch
	if p.steps == 0 {
		p.steps = (n + b - 1) / b
	}
	if s.world.Rank() == 0 {
		s.log.Info("mini-batch training", zap.Int("batch", b), zap.Int("vertices", n),
			zap.Float64("inclusion_p", sampler.InclusionProbability(n, b)), zap.Int("steps_per_epoch", p.steps),
			zap.Int("replicas", p.g.Shape.D), zap.Bool("prefetch", t.Prefetch))
	}
	return nil
}

func (p *plexus) StepsPerEpoch() int { return p.steps }

func (p *plexus) Start(step, _ int) error {
	if p.batches != nil {
		// Sampling is a function of the step: the prefetcher starts at
		// the checkpoint's.
		p.pf = sampler.NewPrefetcher(p.batches.NewBatch, p.batches.BuildInto, step, p.prefetch)
	}
	return nil
}

func (p *plexus) BeginEpoch() {
	p.m.Times, p.m.PMMBytes = gcn.Times{}, 0
	p.wait, p.build = 0, 0
}

func (p *plexus) Step(step int) (float64, error) {
	var batch *gcn.Shards
	if p.pf != nil {
		sh, wait, took, err := p.pf.Next()
		if err != nil {
			return 0, fmt.Errorf("sampling batch %d: %w", step, err)
		}
		p.wait += wait
		p.build += took
		p.m.Use(sh)
		batch = sh
	}
	loss, err := p.m.TrainStep(step)
	if err != nil {
		return 0, err
	}
	if batch != nil {
		// The step has read its batch: the prefetcher may build into it
		// again (the model keeps it only until the next Use, and Evaluate
		// runs on the full graph).
		p.pf.Release(batch)
	}
	return loss, nil
}

func (p *plexus) EndEpoch() {}

func (p *plexus) Evaluate() (gcn.Accuracy, int64, error) {
	acc, err := p.m.Evaluate()
	return acc, 0, err // the evaluation's bytes are the grid's: in Counters
}

func (p *plexus) Counters() [2]int64 { return gridCounters(p.g) }

// gridCounters is what this rank has handed to g's X, Y and Z
// communicators together (the 3D grid) and to its data-parallel one: the
// counters of every method that trains on the 4D grid.
func gridCounters(g *grid.Grid) [2]int64 {
	var b [2]int64
	for _, c := range []collectives.Comm{g.XComm, g.YComm, g.ZComm} {
		b[0] += c.Counters().TotalBytes()
	}
	b[1] = g.DP.Counters().TotalBytes()
	return b
}

func (p *plexus) Split(time.Duration) Split {
	t := p.m.Times
	return Split{SpMM: t.SpMM, GEMM: t.GEMM, Comm: t.Comm, DP: t.DP, SampleWait: p.wait, SampleBuild: p.build, PMMBytes: p.m.PMMBytes}
}

func (p *plexus) Close() {
	if p.pf != nil {
		p.pf.Close()
	}
}

func (p *plexus) Fingerprint() (gcn.Fingerprint, error) { return p.m.Fingerprint() }
func (p *plexus) ModelConfig() gcn.Config               { return p.m.Cfg }
func (p *plexus) GridName() string                      { return p.g.Shape.String() }
func (p *plexus) OptimizerSteps() int                   { return p.m.OptimizerSteps() }

// SaveParams writes the sharded model block by block (checkpoint.Save).
func (p *plexus) SaveParams(root string, keep int, man checkpoint.Manifest, config []byte) (string, error) {
	return checkpoint.Save(p.world, root, keep, p.m, man, config)
}

func (p *plexus) LoadParams(dir string, man *checkpoint.Manifest) error {
	return checkpoint.Load(p.world, dir, p.m, man)
}

func (p *plexus) Probabilities() (gcn.Block, error)   { return p.m.Probabilities() }
func (p *plexus) Embeddings(l int) (gcn.Block, error) { return p.m.Embeddings(l) }
func (p *plexus) Vertices() int                       { return p.m.Shards().N }
