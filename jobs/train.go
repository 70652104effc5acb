package jobs

import (
	"errors"
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
	b, err := batchSizeFor(j.Cfg, n)
	if err != nil {
		return err
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

// stepTimes is what one rank spent in an epoch beyond the model's Times,
// and what it moved outside the training collectives: evaluation's
// collectives (evalBytes) and isolated mode's chunk loads (chunkBytes).
type stepTimes struct {
	sampleWait, sampleBuild, eval time.Duration
	evalBytes, chunkBytes         int64
}

// Train runs the epochs — one full-graph step each, or the epoch's
// mini-batch steps — evaluation (full graph, no dropout) every eval_every
// epochs and at the end, timings reduced over all ranks, and on rank 0 the
// log lines, the metrics file and summary.json.
func (j *Job) Train() (_ *Result, err error) {
	if j.nb != nil {
		return j.trainNeighbor()
	}
	if j.cb != nil {
		return j.trainCAGNETMiniBatch() // before j.ca: cb trains ca
	}
	if j.ca != nil {
		return j.trainCAGNET()
	}
	cfg, m := j.Cfg, j.Model
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
	var batches *sampler.Prefetcher[*gcn.Shards]
	if j.batches != nil {
		// Sampling is a function of the step: the prefetcher starts at the
		// checkpoint's.
		batches = sampler.NewPrefetcher(j.batches.NewBatch, j.batches.BuildInto, pos.step, cfg.Train.Prefetch)
		defer batches.Close()
	}
	res := run.res
	step := pos.step
	lastCkpt := time.Now()
	for epoch := pos.epoch + 1; epoch <= cfg.Train.Epochs; epoch++ {
		m.Times, m.PMMBytes = gcn.Times{}, 0
		bytes0 := j.commBytes()
		var st stepTimes
		t0 := time.Now()
		lossSum, first := 0.0, 0
		if epoch == pos.epoch+1 {
			// An epoch a signal stopped part-way continues where it was.
			lossSum, first = pos.lossSum, pos.epochSteps
		}
		for s := first; s < j.steps; s++ {
			j.enter(epoch, step) // the watchdog's stage (progress.go)
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
			if j.iso != nil {
				j.iso.beforeStep(m)
			}
			loss, err := m.TrainStep(step)
			if err != nil {
				return nil, fmt.Errorf("epoch %d step %d: %w", epoch, step, err)
			}
			if batch != nil {
				// The step has read its batch: the prefetcher may build
				// into it again (the model keeps it only until the next
				// Use, and Evaluate runs on the full graph).
				batches.Release(batch)
			}
			j.progressed()
			lossSum += loss
			step++
			if err := run.checkStep(epoch, step-1, loss); err != nil {
				return nil, j.interrupted(err, position{step: step, epoch: epoch - 1, epochSteps: s + 1, lossSum: lossSum}, run)
			}
		}
		if j.iso != nil {
			j.iso.endEpoch() // the next super-epoch's partition, if it ends here
			st.chunkBytes = j.iso.epochChunkBytes()
		}
		em := EpochMetrics{Epoch: epoch, Loss: lossSum / float64(j.steps), Steps: j.steps}
		// The split covers the training steps; evaluation is timed whole.
		trainTime, times, pmm := time.Since(t0), m.Times, m.PMMBytes
		if epoch%cfg.Train.EvalEvery == 0 || epoch == cfg.Train.Epochs {
			t1 := time.Now()
			j.enter(epoch, -1)
			var acc gcn.Accuracy
			var err error
			if j.iso != nil {
				acc, st.evalBytes, err = j.iso.evaluate(m)
			} else {
				acc, err = m.Evaluate()
			}
			if err != nil {
				return nil, fmt.Errorf("epoch %d evaluation: %w", epoch, err)
			}
			j.progressed()
			st.eval = time.Since(t1)
			run.recordEval(&em, acc)
		}
		bytes := j.commBytes()
		for i := range bytes {
			bytes[i] -= bytes0[i]
		}
		if err := j.reduceEpoch(&em, trainTime, time.Since(t0), times, st, pmm, bytes); err != nil {
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

// checkpointDue reports whether [checkpoint] asks for a checkpoint after
// epoch: every `every` epochs, or once `interval` of wall time has passed
// since the last (the ranks agree on the clock's verdict in one
// all-reduce, taken only when an interval is set).
func (j *Job) checkpointDue(epoch int, last time.Time) (bool, error) {
	c := j.Cfg.Checkpoint
	if c.Every > 0 && epoch%c.Every == 0 {
		return true, nil
	}
	if c.Interval == "" {
		return false, nil
	}
	d, _ := time.ParseDuration(c.Interval) // validated
	flag := []float64{0}
	if time.Since(last) >= d {
		flag[0] = 1
	}
	if err := j.world.AllReduceF64(flag, collectives.Max); err != nil {
		return false, err
	}
	return flag[0] != 0, nil
}

// interrupted completes checkStep's InterruptedError: the checkpoint at
// pos, when [checkpoint] is configured. Other errors pass through.
func (j *Job) interrupted(err error, pos position, run *runState) error {
	var ie *InterruptedError
	if !errors.As(err, &ie) {
		return err
	}
	ie.Epoch = pos.epoch + 1
	if !j.Cfg.Checkpoint.Enabled() {
		return ie
	}
	dir, cerr := j.saveCheckpoint(j.Cfg.CheckpointDir(), j.Cfg.Checkpoint.Keep, pos, run)
	if cerr != nil {
		return fmt.Errorf("%v; writing its checkpoint failed: %w", ie, cerr)
	}
	ie.Checkpoint = dir
	return ie
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
		float64(st.evalBytes), float64(st.chunkBytes),
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
	em.EvalBytes, em.ChunkBytes = int64(vals[13]), int64(vals[14])
	return nil
}
