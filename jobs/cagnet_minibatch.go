package jobs

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"scalegnn/cagnet"
	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/sampler"
)

// batchSizeFor turns train.batch_size or batch_ratio into the vertices of a
// mini-batch of a graph of n, with the error naming the key: the one rule
// of 4D (setupBatches) and 1.5D mini-batch jobs.
func batchSizeFor(cfg *Config, n int) (int, error) {
	t := cfg.Train
	b, err := sampler.BatchSize(n, t.BatchSize, t.BatchRatio)
	if err != nil {
		key := "train.batch_size"
		if t.BatchRatio != 0 {
			key = "train.batch_ratio"
		}
		return 0, fmt.Errorf("%s: %s: %v (dataset %s)", cfg.label(), key, err, cfg.Dataset.Source)
	}
	return b, nil
}

// setupCAGNETMiniBatch builds a train.mode = "minibatch", train.algorithm
// = "1.5d" job: grid.d replicas (g.DP) of P = x·y·z ranks (g.Cube) as
// P/c × c, each reading its block rows from the Source and training the
// batches that a 4D job with the same seed and grid.d trains
// (cagnet.MiniBatch).
func setupCAGNETMiniBatch(cfg *Config, g *grid.Grid, src gcn.Source, mcfg gcn.Config, world collectives.Comm, dev device.Device, log *zap.Logger) (*Job, error) {
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
		return nil, fmt.Errorf("%s: %w", cfg.label(), err)
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
	return &Job{Cfg: cfg, Grid: g, log: log, world: world, steps: steps, ca: mb.Model, cb: mb}, nil
}

// trainCAGNETMiniBatch is Train for a 1.5D mini-batch job: the epoch's
// steps (the next batch's host half built while a step trains with
// train.prefetch), the
// gradients averaged over the replicas, evaluation of the full graph every
// eval_every epochs and at the end, the same metrics lines,
// summary.json, checkpoints ([checkpoint] every/interval, and on a
// signal), -resume and output.save_model as 4D: a checkpoint holds the
// replicated parameters (jobs/cagnet_keep.go) and the step, and the
// batches are a function of the step, so a resumed run continues exactly.
// In the metrics, gemm_s is the steps' time but the wait for batches
// (sample_wait_s; sample_s their building), comm_3d_bytes the
// bytes of the process row and column communicators and dp_bytes those of
// the replicas' all-reduce.
func (j *Job) trainCAGNETMiniBatch() (_ *Result, err error) {
	cfg, m := j.Cfg, j.cb
	run, err := j.beginRun()
	if err != nil {
		return nil, err
	}
	defer run.finish(&err) // summary.json: completed, interrupted, diverged or failed
	defer m.Close()        // the prefetching goroutine
	var pos position
	if j.resume != nil {
		if pos, err = run.resumeFrom(j.resume); err != nil {
			return nil, err
		}
		j.resume = nil
		if t := m.OptimizerSteps(); t != pos.step {
			// The sample and the dropout masks follow the step, the
			// optimizer's bias correction its count: one number.
			return nil, fmt.Errorf("%s: the checkpoint is at step %d after %d optimizer steps; a 1.5D mini-batch run resumes where they agree: resume from another checkpoint", cfg.label(), pos.step, t)
		}
	}
	row, col := m.Comms()
	bytesOf := func() [2]int64 {
		return [2]int64{row.Counters().TotalBytes() + col.Counters().TotalBytes(), j.Grid.DP.Counters().TotalBytes()}
	}
	res := run.res
	step := pos.step
	lastCkpt := time.Now()
	for epoch := pos.epoch + 1; epoch <= cfg.Train.Epochs; epoch++ {
		b0 := bytesOf()
		w0, s0 := m.SampleTimes()
		t0 := time.Now()
		lossSum, first := 0.0, 0
		if epoch == pos.epoch+1 {
			// An epoch a signal stopped part-way continues where it was.
			lossSum, first = pos.lossSum, pos.epochSteps
		}
		for s := first; s < j.steps; s++ {
			j.enter(epoch, step)
			loss, err := m.LossAndGrad(step)
			if err != nil {
				return nil, fmt.Errorf("epoch %d step %d: %w", epoch, step, err)
			}
			m.Step()
			j.progressed()
			lossSum += loss
			step++
			if err := run.checkStep(epoch, step-1, loss); err != nil {
				return nil, j.interrupted(err, position{step: step, epoch: epoch - 1, epochSteps: s + 1, lossSum: lossSum}, run)
			}
		}
		trainTime := time.Since(t0)
		em := EpochMetrics{Epoch: epoch, Loss: lossSum / float64(j.steps), Steps: j.steps}
		var st stepTimes
		w1, s1 := m.SampleTimes()
		st.sampleWait, st.sampleBuild = w1-w0, s1-s0
		if epoch%cfg.Train.EvalEvery == 0 || epoch == cfg.Train.Epochs {
			t1 := time.Now()
			j.enter(epoch, -1)
			e0 := bytesOf()
			acc, err := m.Accuracy()
			if err != nil {
				return nil, fmt.Errorf("epoch %d evaluation: %w", epoch, err)
			}
			st.evalBytes = bytesOf()[0] - e0[0]
			j.progressed()
			st.eval = time.Since(t1)
			run.recordEval(&em, gcn.Accuracy{Train: acc[0], Val: acc[1], Test: acc[2]})
		}
		b1 := bytesOf()
		bytes := [2]int64{b1[0] - b0[0] - st.evalBytes, b1[1] - b0[1]}
		// gemm_s is the steps' time but the wait for batches (sample_wait_s).
		if err := j.reduceEpoch(&em, trainTime, time.Since(t0), gcn.Times{GEMM: trainTime - st.sampleWait}, st, 0, bytes); err != nil {
			return nil, err
		}
		stop, err := j.finishEpoch(run, em, step, &lastCkpt)
		if err != nil {
			return nil, err
		}
		if stop {
			break
		}
	}
	if err := j.finishTraining(run, step); err != nil {
		return nil, err
	}
	return res, nil
}
