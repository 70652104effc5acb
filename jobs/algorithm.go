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
	"scalegnn/perfmodel"
	"scalegnn/permute"
)

// The values of train.algorithm.
const (
	Algorithm3D  = "3d"
	Algorithm15D = "1.5d"
)

// checkAlgorithm validates train.algorithm and grid.replication.
func checkAlgorithm(file string, c *Config) error {
	t, g := c.Train, c.Grid
	switch {
	case t.Algorithm != Algorithm15D && t.Algorithm != Algorithm3D && t.Algorithm != "":
		return fmt.Errorf(`%s: train.algorithm = %q: expected "3d" (the default) or "1.5d"`, file, t.Algorithm)
	case t.Algorithm != Algorithm15D:
		return fmt.Errorf(`%s: grid.replication = %d applies to train.algorithm = "1.5d": set it or remove grid.replication`, file, g.Replication)
	case g.Auto && g.Replication > 1:
		return fmt.Errorf(`%s: grid.auto = true chooses grid.replication too: remove grid.replication = %d or set grid.auto = false`, file, g.Replication)
	case g.Replication < 0 || g.Replication > 1 && (g.X*g.Y*g.Z)%g.Replication != 0:
		return fmt.Errorf(`%s: grid.replication = %d with x·y·z = %d ranks: replication must divide the rank count`, file, g.Replication, g.X*g.Y*g.Z)
	}
	if err := cagnetScope(c); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// cagnetScope says why package cagnet cannot train the job, or nil: the
// one rule that both the config check of train.algorithm = "1.5d" and the
// performance model's list of algorithms (PerfChoices) follow.
func cagnetScope(c *Config) error {
	t, g, m := c.Train, c.Grid, c.Model
	switch {
	case t.Mode != gcn.FullGraph && t.Mode != gcn.MiniBatch:
		return fmt.Errorf(`train.mode = %q: train.algorithm = "1.5d" trains the full graph or uniform mini-batches: set train.mode = "fullgraph" or "minibatch"`, t.Mode)
	case g.D > 1 && t.Mode != gcn.MiniBatch:
		// Data-parallel replicas train one mini-batch each per step; a
		// full-graph step has one batch, the graph, as in 3D.
		return fmt.Errorf(`grid.d = %d: train.algorithm = "1.5d" has data-parallel replicas in mini-batch training only: set train.mode = "minibatch" or grid.d = 1`, g.D)
	case m.InputProjection || m.OutputHead || m.Residual || m.Norm != gcn.NoNorm:
		return fmt.Errorf(`train.algorithm = "1.5d" trains GCN and SAGE layers without extras: set model.input_projection, output_head and residual false and model.norm = "none"`)
	case c.Permute.Scheme == permute.Double:
		return fmt.Errorf(`permute.scheme = "double" does not apply to train.algorithm = "1.5d" (one vertex order serves every layer): use "single" or "none"`)
	}
	return nil
}

// AlgorithmOf is the algorithm a job trains with, as the performance
// model names it (perfmodel.Prediction.Algorithm) and summary.json records
// it: "1.5d" when train.algorithm says so (full-graph or mini-batch
// training), otherwise 3D in full-graph training, the 3D/4D grids of
// mini-batch training or the mode's own algorithm.
func AlgorithmOf(cfg *Config) string {
	if cfg.Train.Algorithm == Algorithm15D { // full-graph or mini-batch
		return perfmodel.AlgorithmCAGNET
	}
	switch cfg.Train.Mode {
	case gcn.FullGraph:
		return perfmodel.AlgorithmPlexus
	case gcn.Neighbor:
		return perfmodel.AlgorithmNeighbor
	case gcn.Isolated:
		return perfmodel.AlgorithmIsolated
	}
	return perfmodel.AlgorithmPlexus
}

// setupCAGNET builds a 1.5D job from the Source (the normalised Â,
// permuted as [permute] says: order 0 of its Orders; in memory or a
// prepared dataset): cagnet.NewFromSource reads this rank's block rows
// only.
func setupCAGNET(cfg *Config, g *grid.Grid, src gcn.Source, mcfg gcn.Config, world collectives.Comm, dev device.Device, log *zap.Logger) (*Job, error) {
	t0 := time.Now()
	c := max(cfg.Grid.Replication, 1)
	m, err := cagnet.NewFromSource(world, dev, cagnet.Options{Replication: c,
		BF16: cfg.Train.CommDtype == collectives.BF16}, mcfg, OptimizerFor(cfg), src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.label(), err)
	}
	loadProgress(world)("the block rows")
	if world.Rank() == 0 {
		log.Info("1.5d (CAGNET) training", zap.Int("process_rows", m.L.Q), zap.Int("replication", m.L.C),
			zap.String("permutation", cfg.Permute.Scheme.String()), zap.Stringer("comm_dtype", cfg.Train.CommDtype),
			zap.Duration("block_rows_took", time.Since(t0)))
	}
	return &Job{Cfg: cfg, Grid: g, log: log, world: world, steps: 1, ca: m}, nil
}

// trainCAGNET is Train for a 1.5D job: one full-graph step per epoch,
// evaluation every eval_every epochs and at the end, the same metrics
// lines, summary.json, checkpoints ([checkpoint] every/interval, and on a
// signal), -resume and output.save_model as 3D. In the metrics, gemm_s
// is the step's whole time and comm_3d_bytes the bytes of the process
// row and column communicators.
func (j *Job) trainCAGNET() (_ *Result, err error) {
	cfg, m := j.Cfg, j.ca
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
	row, col := m.Comms()
	bytesOf := func() int64 { return row.Counters().TotalBytes() + col.Counters().TotalBytes() }
	res := run.res
	step := pos.step
	lastCkpt := time.Now()
	for epoch := pos.epoch + 1; epoch <= cfg.Train.Epochs; epoch++ {
		b0 := bytesOf()
		t0 := time.Now()
		loss := pos.lossSum
		// An epoch whose one step a signal stopped after is evaluated and
		// logged now; any other trains its step.
		if epoch > pos.epoch+1 || pos.epochSteps == 0 {
			j.enter(epoch, step)
			if loss, err = m.LossAndGrad(); err != nil {
				return nil, fmt.Errorf("epoch %d: %w", epoch, err)
			}
			m.Step()
			j.progressed()
			step++
			if err := run.checkStep(epoch, step-1, loss); err != nil {
				return nil, j.interrupted(err, position{step: step, epoch: epoch - 1, epochSteps: 1, lossSum: loss}, run)
			}
		}
		trainTime := time.Since(t0)
		em := EpochMetrics{Epoch: epoch, Loss: loss, Steps: 1}
		var st stepTimes
		if epoch%cfg.Train.EvalEvery == 0 || epoch == cfg.Train.Epochs {
			t1 := time.Now()
			j.enter(epoch, -1)
			e0 := bytesOf()
			acc, err := m.Accuracy()
			if err != nil {
				return nil, fmt.Errorf("epoch %d evaluation: %w", epoch, err)
			}
			st.evalBytes = bytesOf() - e0
			j.progressed()
			st.eval = time.Since(t1)
			run.recordEval(&em, gcn.Accuracy{Train: acc[0], Val: acc[1], Test: acc[2]})
		}
		bytes := [2]int64{bytesOf() - b0 - st.evalBytes, 0}
		if err := j.reduceEpoch(&em, trainTime, time.Since(t0), gcn.Times{GEMM: trainTime}, st, 0, bytes); err != nil {
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
