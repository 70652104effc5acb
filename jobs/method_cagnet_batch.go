package jobs

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"scalegnn/cagnet"
	"scalegnn/collectives"
	"scalegnn/jobfile"
	"scalegnn/sampler"
)

// batchSizeFor turns train.batch_size or batch_ratio into the vertices of a
// mini-batch of a graph of n, with the error naming the key: the one rule
// of 4D (setupBatches) and 1.5D mini-batch jobs.
func batchSizeFor(cfg *jobfile.Config, n int) (int, error) {
	t := cfg.Train
	b, err := sampler.BatchSize(n, t.BatchSize, t.BatchRatio)
	if err != nil {
		key := "train.batch_size"
		if t.BatchRatio != 0 {
			key = "train.batch_ratio"
		}
		return 0, fmt.Errorf("%s: %s: %v (dataset %s)", cfg.Label(), key, err, cfg.Dataset.Source)
	}
	return b, nil
}

// setupCAGNETMiniBatch builds a train.mode = "minibatch", train.algorithm
// = "1.5d" job: grid.d replicas (g.DP) of P = x·y·z ranks (g.Cube) as
// P/c × c, each reading its block rows from the Source and training the
// batches that a 4D job with the same seed and grid.d trains
// (cagnet.MiniBatch).
func setupCAGNETMiniBatch(s setup) (Method, error) {
	cfg, g, src, mcfg, world, dev, log := s.cfg, s.g, s.src, s.mcfg, s.world, s.dev, s.log
	t0 := time.Now()
	n := src.Sizes().N
	b, err := batchSizeFor(cfg, n)
	if err != nil {
		return nil, err
	}
	c := max(cfg.Grid.Replication, 1)
	mb, err := cagnet.NewMiniBatch(g.Cube, dev, cagnet.Options{Replication: c, BF16: cfg.Train.CommDtype == collectives.BF16},
		cagnet.BatchOptions{Size: b, Seed: uint64(cfg.Train.Seed), DP: g.DP, Prefetch: cfg.Train.Prefetch}, mcfg, OptimizerFor(cfg), src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Label(), err)
	}
	loadProgress(world)("the block rows")
	steps := cfg.Train.StepsPerEpoch
	if steps == 0 {
		steps = (n + b - 1) / b
	}
	if world.Rank() == 0 {
		log.Info("1.5d (CAGNET) mini-batch training", zap.Int("process_rows", mb.L.Q), zap.Int("replication", mb.L.C),
			zap.Int("replicas", g.Shape.D), zap.Int("batch", b), zap.Int("vertices", n),
			zap.Float64("inclusion_p", sampler.InclusionProbability(n, b)), zap.Int("steps_per_epoch", steps), zap.Bool("prefetch", cfg.Train.Prefetch),
			zap.String("permutation", cfg.Permute.Scheme.String()), zap.Stringer("comm_dtype", cfg.Train.CommDtype),
			zap.Duration("block_rows_took", time.Since(t0)))
	}
	full := &cagnetFull{replicated: replicated{comm: world, model: mb.Model}, g: g, m: mb.Model}
	return &cagnetBatch{cagnetFull: full, mb: mb, steps: steps}, nil
}

// cagnetBatch is train.mode = "minibatch" with train.algorithm = "1.5d":
// grid.d replicas of a 1.5D model, each training the batches a 4D job
// with the same seed and grid.d trains (the next batch's host half built
// while a step trains with train.prefetch), the gradients averaged over
// the replicas. A checkpoint holds the replicated parameters and the
// step, and the batches are a function of the step, so a resumed run
// continues exactly. In the metrics, gemm_s is the steps' time but the
// wait for batches (sample_wait_s; sample_s their building),
// comm_3d_bytes the bytes of the process row and column communicators and
// dp_bytes those of the replicas' all-reduce.
type cagnetBatch struct {
	*cagnetFull
	mb     *cagnet.MiniBatch
	steps  int
	w0, s0 time.Duration // the sampler's times at BeginEpoch
}

func (c *cagnetBatch) StepsPerEpoch() int { return c.steps }

func (c *cagnetBatch) Start(step, _ int) error {
	if t := c.mb.OptimizerSteps(); t != step {
		// The sample and the dropout masks follow the step, the
		// optimizer's bias correction its count: one number.
		return fmt.Errorf("the checkpoint is at step %d after %d optimizer steps; a 1.5D mini-batch run resumes where they agree: resume from another checkpoint", step, t)
	}
	return nil
}

func (c *cagnetBatch) BeginEpoch() { c.w0, c.s0 = c.mb.SampleTimes() }

func (c *cagnetBatch) Step(step int) (float64, error) {
	loss, err := c.mb.LossAndGrad(step)
	if err != nil {
		return 0, err
	}
	c.mb.Step()
	return loss, nil
}

func (c *cagnetBatch) Counters() [2]int64 {
	return [2]int64{c.cagnetFull.Counters()[0], c.g.DP.Counters().TotalBytes()}
}

// Split: gemm_s is the steps' time but the wait for batches.
func (c *cagnetBatch) Split(train time.Duration) Split {
	w1, s1 := c.mb.SampleTimes()
	wait := w1 - c.w0
	return Split{GEMM: train - wait, SampleWait: wait, SampleBuild: s1 - c.s0}
}

func (c *cagnetBatch) Close() { c.mb.Close() } // the prefetching goroutine
