package jobs

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/sampler"
)

// setupBatches checks the batch size against the graph and builds the
// mini-batch builder over the model's shards.
func (j *Job) setupBatches(n int) error {
	t := j.Cfg.Train
	b, err := sampler.BatchSize(n, t.BatchSize, t.BatchRatio)
	if err != nil {
		key := "train.batch_size"
		if t.BatchRatio != 0 {
			key = "train.batch_ratio"
		}
		return fmt.Errorf("%s: %s: %v (dataset %s)", j.Cfg.label(), key, err, j.Cfg.Dataset.Source)
	}
	j.batches, err = gcn.NewBatchBuilder(j.Grid, j.Model.Cfg, j.Model.Shards(), uint64(t.Seed), b)
	if err != nil {
		return err
	}
	j.steps = t.StepsPerEpoch
	if j.steps == 0 {
		j.steps = (n + b - 1) / b
	}
	if j.world.Rank() == 0 {
		j.log.Info("mini-batch training", zap.Int("batch", b), zap.Int("vertices", n),
			zap.Float64("inclusion_p", sampler.InclusionProbability(n, b)), zap.Int("steps_per_epoch", j.steps),
			zap.Int("replicas", j.Grid.Shape.D), zap.Bool("prefetch", t.Prefetch))
	}
	return nil
}

// stepTimes is what one rank spent in an epoch beyond the model's Times.
type stepTimes struct {
	sampleWait, sampleBuild, eval time.Duration
}

// Train runs the epochs — one full-graph step each, or the epoch's
// mini-batch steps — evaluation (full graph, no dropout) every eval_every
// epochs and at the end, timings reduced over all ranks, and on rank 0 the
// log lines, the metrics file and summary.json.
func (j *Job) Train() (_ *Result, err error) {
	cfg, m := j.Cfg, j.Model
	run, err := j.beginRun()
	if err != nil {
		return nil, err
	}
	defer func() { err = run.end(err) }() // summary.json: completed, diverged or failed
	var batches *sampler.Prefetcher[*gcn.Shards]
	if j.batches != nil {
		batches = sampler.NewPrefetcher(j.batches.NewBatch, j.batches.BuildInto, 0, cfg.Train.Prefetch)
		defer batches.Close()
	}
	res := run.res
	step := 0
	for epoch := 1; epoch <= cfg.Train.Epochs; epoch++ {
		m.Times, m.PMMBytes = gcn.Times{}, 0
		bytes0 := j.commBytes()
		var st stepTimes
		t0 := time.Now()
		lossSum := 0.0
		for s := 0; s < j.steps; s++ {
			var batch *gcn.Shards
			if batches != nil {
				sh, wait, took, err := batches.Next()
				if err != nil {
					return nil, fmt.Errorf("epoch %d: sampling batch %d: %w", epoch, step, err)
				}
				st.sampleWait += wait
				st.sampleBuild += took
				m.Use(sh)
				batch = sh
			}
			loss, err := m.TrainStep(step)
			if err != nil {
				return nil, fmt.Errorf("epoch %d step %d: %w", epoch, step, err)
			}
			if err := run.checkLoss(epoch, step, loss); err != nil {
				return nil, err
			}
			if batch != nil {
				// The step has read its batch: the prefetcher may build
				// into it again (the model keeps it only until the next
				// Use, and Evaluate runs on the full graph).
				batches.Release(batch)
			}
			lossSum += loss
			step++
		}
		em := EpochMetrics{Epoch: epoch, Loss: lossSum / float64(j.steps), Steps: j.steps}
		// The split covers the training steps; evaluation is timed whole.
		trainTime, times, pmm := time.Since(t0), m.Times, m.PMMBytes
		if epoch%cfg.Train.EvalEvery == 0 || epoch == cfg.Train.Epochs {
			t1 := time.Now()
			acc, err := m.Evaluate()
			if err != nil {
				return nil, fmt.Errorf("epoch %d evaluation: %w", epoch, err)
			}
			st.eval = time.Since(t1)
			em.SetAccuracies(acc.Train, acc.Val, acc.Test)
			res.Final = acc
			if acc.Val > res.BestValAcc || res.BestEpoch < 0 {
				res.BestValAcc, res.TestAtBest, res.BestEpoch = acc.Val, acc.Test, epoch
			}
		}
		bytes := j.commBytes()
		for i := range bytes {
			bytes[i] -= bytes0[i]
		}
		if err := j.reduceEpoch(&em, trainTime, time.Since(t0), times, st, pmm, bytes); err != nil {
			return nil, err
		}
		if stop, err := run.epochDone(em); err != nil || stop { // log, metrics, train.target_acc and patience
			if err != nil {
				return nil, err
			}
			break
		}
	}
	return res, nil
}

// commBytes returns the payload bytes this rank has handed so far to the
// collectives of its X, Y and Z communicators together (the 3D grid) and of
// its DP communicator.
func (j *Job) commBytes() [2]int64 {
	g := j.Grid
	var b [2]int64
	for _, c := range []collectives.Comm{g.XComm, g.YComm, g.ZComm} {
		b[0] += c.Counters().TotalBytes()
	}
	b[1] = g.DP.Counters().TotalBytes()
	return b
}

// reduceEpoch fills em with the epoch's time split (max and mean over
// ranks), the loss averaged over data-parallel replicas, and the bytes
// summed over ranks — in two all-reduces over the world.
func (j *Job) reduceEpoch(em *EpochMetrics, train, elapsed time.Duration, t gcn.Times, st stepTimes, pmm int64, bytes [2]int64) error {
	other := train - t.SpMM - t.GEMM - t.Comm - t.DP - st.sampleWait
	vals := []float64{
		t.SpMM.Seconds(), t.GEMM.Seconds(), t.Comm.Seconds(), t.DP.Seconds(), other.Seconds(),
		st.sampleWait.Seconds(), st.sampleBuild.Seconds(), st.eval.Seconds(), elapsed.Seconds(),
		em.Loss, float64(pmm), float64(bytes[0]), float64(bytes[1]),
	}
	mx := append([]float64(nil), vals...)
	if err := j.world.AllReduceF64(mx, collectives.Max); err != nil {
		return err
	}
	if err := j.world.AllReduceF64(vals, collectives.Sum); err != nil {
		return err
	}
	n := float64(j.world.Size())
	em.SpMMSecMax, em.GEMMSecMax, em.CommSecMax, em.DPSecMax, em.OtherSecMax = mx[0], mx[1], mx[2], mx[3], mx[4]
	em.SpMMSecMean, em.GEMMSecMean, em.CommSecMean, em.DPSecMean, em.OtherSecMean = vals[0]/n, vals[1]/n, vals[2]/n, vals[3]/n, vals[4]/n
	em.SampleWaitSecMax, em.SampleWaitSecMean = mx[5], vals[5]/n
	em.SampleSecMax, em.SampleSecMean = mx[6], vals[6]/n
	em.EvalSec, em.EpochSec = mx[7], mx[8]
	// Every rank of a replica holds its replica's loss, so the mean over
	// ranks is the mean over replicas.
	em.Loss = vals[9] / n
	em.PMMBytes, em.Comm3DBytes, em.DPBytes = int64(vals[10]), int64(vals[11]), int64(vals[12])
	return nil
}
