package jobs

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/neighbor"
	"scalegnn/sampler"
)

// neighborRun is one rank's state of a train.mode = "neighbor" job
// (package neighbor): every rank a data-parallel worker, grid d = ranks.
type neighborRun struct {
	graph   *neighbor.Graph
	model   *neighbor.Model
	trainer *neighbor.Trainer
	builder *neighbor.Builder
	eval    *neighbor.Evaluator
}

// checkNeighbor validates the keys of train.mode = "neighbor".
func checkNeighbor(file string, c *Config) error {
	t, g, m := c.Train, c.Grid, c.Model
	switch {
	case t.BatchSize < 1:
		return fmt.Errorf(`%s: train.mode = "neighbor" needs train.batch_size, the seeds per rank per step (at least 1)`, file)
	case t.BatchRatio != 0 || t.StepsPerEpoch != 0:
		return fmt.Errorf(`%s: train.batch_ratio and steps_per_epoch apply to train.mode = "minibatch"; neighbor mode takes train.batch_size seeds per rank and ceil(train vertices / (ranks × batch_size)) steps per epoch: remove them`, file)
	case len(t.Fanouts) != m.Layers:
		return fmt.Errorf(`%s: train.fanouts = %v: expected one fanout per layer (model.layers = %d), first layer first, e.g. fanouts = [25, 10]`, file, t.Fanouts, m.Layers)
	case g.Auto || g.X != 1 || g.Y != 1 || g.Z != 1:
		return fmt.Errorf(`%s: train.mode = "neighbor" makes every rank a data-parallel worker: set grid.x = y = z = 1 and grid.d = the number of ranks (grid.auto = false)`, file)
	case m.InputProjection || m.OutputHead || m.Residual || m.Norm != gcn.NoNorm:
		return fmt.Errorf(`%s: train.mode = "neighbor" trains a plain stack of graph layers: set model.input_projection, output_head and residual to false and model.norm = "none"`, file)
	}
	for l, f := range t.Fanouts {
		if f < 1 {
			return fmt.Errorf(`%s: train.fanouts[%d] = %d: expected at least 1 neighbour per vertex (a fanout at least the largest degree keeps every neighbourhood whole)`, file, l, f)
		}
	}
	return nil
}

// setupNeighbor builds a neighbor-mode job: this rank's part of the graph
// under hybrid partitioning (the whole topology, its feature block), the
// model on dev, the batch builder and the evaluator. The training
// communicator is the grid's data-parallel one (all ranks), so the
// metrics' dp_bytes are the training bytes; evaluation gathers on the
// world communicator.
func setupNeighbor(cfg *Config, g *grid.Grid, src gcn.Source, mcfg gcn.Config, world collectives.Comm, dev device.Device, log *zap.Logger) (*Job, error) {
	t := cfg.Train
	ranks, rank := g.DP.Size(), g.DP.Rank()
	ng, err := neighbor.Load(src, mcfg.Classes, rank, ranks)
	if err != nil {
		return nil, err
	}
	m, err := neighbor.NewModel(dev, mcfg, OptimizerFor(cfg))
	if err != nil {
		return nil, err
	}
	seeds, err := neighbor.NewSeeds(ng.Train, uint64(t.Seed), ranks, rank, t.BatchSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %v (dataset %s)", cfg.label(), err, cfg.Dataset.Source)
	}
	nr := &neighborRun{graph: ng, model: m, trainer: neighbor.NewTrainer(g.DP, ng, m),
		builder: neighbor.NewBuilder(ng, seeds, mcfg.Layer, t.Fanouts, uint64(t.Seed)),
		eval:    neighbor.NewEvaluator(world, ng, m)}
	j := &Job{Cfg: cfg, Grid: g, log: log, world: world, steps: seeds.StepsPerEpoch(), nb: nr}
	if rank == 0 {
		log.Info("neighbor-sampling training", zap.Stringer("layer", mcfg.Layer), zap.Ints("fanouts", t.Fanouts),
			zap.Int("seeds_per_rank", t.BatchSize), zap.Int("ranks", ranks), zap.Int("steps_per_epoch", j.steps),
			zap.Int("max_degree", ng.MaxDegree()), zap.Int("feature_rows_per_rank", ng.V1-ng.V0),
			zap.Int("parameters", m.NumParams()), zap.Bool("prefetch", t.Prefetch))
	}
	return j, nil
}

// trainNeighbor is Train for a neighbor-mode job: the epochs' steps on
// prefetched batches, full-graph evaluation every eval_every epochs and
// at the end, and the same metrics lines and summary.json as the other
// modes. In the metrics, gemm_s is the model's device work, comm_s the
// feature exchange, dp_s the gradient all-reduce and optimizer step,
// dp_bytes the training bytes (exchange and gradients; comm_3d_bytes
// stays 0) and eval_bytes evaluation's all-gathers. Checkpoints and
// -resume work as in the other modes (the model is written whole by
// rank 0, see neighbor_checkpoint.go); a resume continues exactly, the
// seeds, samples and dropout being functions of the step.
func (j *Job) trainNeighbor() (_ *Result, err error) {
	cfg, nr := j.Cfg, j.nb
	run, err := j.beginRun()
	if err != nil {
		return nil, err
	}
	defer run.finish(&err) // summary.json: completed, interrupted, diverged or failed
	var pos position
	if j.resume != nil {
		if pos, err = run.resumeFrom(j.resume); err != nil {
			return nil, err
		}
		j.resume = nil
	}
	defer nr.builder.Close()
	// Seeds, neighbours and dropout are functions of the step: the
	// prefetcher starts at the checkpoint's.
	batches := sampler.NewPrefetcher(nr.builder.NewBatch, nr.builder.BuildInto, pos.step, cfg.Train.Prefetch)
	defer batches.Close()
	res := run.res
	step := pos.step
	lastCkpt := time.Now()
	for epoch := pos.epoch + 1; epoch <= cfg.Train.Epochs; epoch++ {
		nr.trainer.Times = neighbor.Times{}
		bytes0 := j.commBytes()
		var st stepTimes
		t0 := time.Now()
		lossSum, first := 0.0, 0
		if epoch == pos.epoch+1 {
			// An epoch a signal stopped part-way continues where it was.
			lossSum, first = pos.lossSum, pos.epochSteps
		}
		for s := first; s < j.steps; s++ {
			j.enter(epoch, step)
			b, wait, took, err := batches.Next()
			if err != nil {
				return nil, fmt.Errorf("epoch %d: sampling batch %d: %w", epoch, step, err)
			}
			st.sampleWait += wait
			st.sampleBuild += took
			loss, err := nr.trainer.TrainStep(b)
			if err != nil {
				return nil, fmt.Errorf("epoch %d step %d: %w", epoch, step, err)
			}
			batches.Release(b)
			j.progressed()
			lossSum += loss
			step++
			if err := run.checkStep(epoch, step-1, loss); err != nil {
				return nil, j.interrupted(err, position{step: step, epoch: epoch - 1, epochSteps: s + 1, lossSum: lossSum}, run)
			}
		}
		em := EpochMetrics{Epoch: epoch, Loss: lossSum / float64(j.steps), Steps: j.steps}
		trainTime := time.Since(t0)
		tt := nr.trainer.Times
		if epoch%cfg.Train.EvalEvery == 0 || epoch == cfg.Train.Epochs {
			t1 := time.Now()
			j.enter(epoch, -1)
			w0 := j.world.Counters().TotalBytes()
			acc, err := nr.eval.Evaluate()
			if err != nil {
				return nil, fmt.Errorf("epoch %d evaluation: %w", epoch, err)
			}
			st.evalBytes = j.world.Counters().TotalBytes() - w0
			j.progressed()
			st.eval = time.Since(t1)
			run.recordEval(&em, acc)
		}
		bytes := j.commBytes()
		for i := range bytes {
			bytes[i] -= bytes0[i]
		}
		times := gcn.Times{GEMM: tt.Compute, Comm: tt.Exchange, DP: tt.Grad}
		if err := j.reduceEpoch(&em, trainTime, time.Since(t0), times, st, 0, bytes); err != nil {
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
