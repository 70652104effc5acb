package jobs

import (
	"errors"
	"fmt"
	"time"

	"scalegnn/collectives"
	"scalegnn/record"
)

// Train runs the job's method through its epochs — one step each in
// full-graph training, the epoch's mini-batch steps otherwise — with
// evaluation (full graph, no dropout) every eval_every epochs and at the
// end, the timings reduced over all ranks, and on rank 0 the log lines,
// the metrics file and summary.json. It is the one training loop: every
// method (jobs/method.go) runs through it, so the evaluation rule, the
// watchdog stages, signals, checkpoints, divergence, the target accuracy
// and patience are written once, here and in the runState.
func (j *Job) Train() (_ *record.Result, err error) {
	cfg, m := j.Cfg, j.method
	run, err := j.beginRun()
	if err != nil {
		return nil, err
	}
	defer run.finish(&err) // summary.json: completed, interrupted, diverged or failed
	defer m.Close()
	var pos position
	if j.resume != nil {
		if pos, err = run.resumeFrom(j.resume, j.world); err != nil {
			return nil, err
		}
		j.resume = nil
	}
	if err := m.Start(pos.step, pos.epoch); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Label(), err)
	}
	steps := m.StepsPerEpoch()
	step := pos.step
	lastCkpt := time.Now()
	for epoch := pos.epoch + 1; epoch <= cfg.Train.Epochs; epoch++ {
		m.BeginEpoch()
		bytes0 := m.Counters()
		t0 := time.Now()
		lossSum, first := 0.0, 0
		if epoch == pos.epoch+1 {
			// An epoch a signal stopped part-way continues where it was,
			// with this rank's own partial loss.
			lossSum, first = pos.lossSum, pos.epochSteps
		}
		for s := first; s < steps; s++ {
			j.enter(epoch, step) // the watchdog's stage (progress.go)
			loss, err := m.Step(step)
			if err != nil {
				return nil, fmt.Errorf("epoch %d step %d: %w", epoch, step, err)
			}
			j.progressed()
			lossSum += loss
			step++
			if err := run.checkStep(epoch, step-1, loss); err != nil {
				return nil, j.interrupted(err, position{step: step, epoch: epoch - 1, epochSteps: s + 1, lossSum: lossSum}, run)
			}
		}
		m.EndEpoch()
		// The split covers the training steps; evaluation is timed whole.
		trainTime := time.Since(t0)
		split := m.Split(trainTime)
		em := record.EpochMetrics{Epoch: epoch, Loss: lossSum / float64(steps), Steps: steps}
		var evalSec time.Duration
		var evalBytes int64
		if epoch%cfg.Train.EvalEvery == 0 || epoch == cfg.Train.Epochs {
			t1 := time.Now()
			j.enter(epoch, -1)
			acc, b, err := m.Evaluate()
			if err != nil {
				return nil, fmt.Errorf("epoch %d evaluation: %w", epoch, err)
			}
			j.progressed()
			evalSec, evalBytes = time.Since(t1), b
			run.recordEval(&em, acc)
		}
		bytes := m.Counters()
		for i := range bytes {
			bytes[i] -= bytes0[i]
		}
		if err := j.reduceEpoch(&em, trainTime, time.Since(t0), split, evalSec, evalBytes, bytes); err != nil {
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
	return run.res, nil
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

// reduceEpoch fills em with the epoch's time split (max and mean over
// ranks), the loss averaged over data-parallel replicas, and the bytes
// summed over ranks — in two all-reduces over the world.
func (j *Job) reduceEpoch(em *record.EpochMetrics, train, elapsed time.Duration, t Split, eval time.Duration, evalBytes int64, bytes [2]int64) error {
	other := train - t.SpMM - t.GEMM - t.Comm - t.DP - t.SampleWait
	vals := []float64{
		t.SpMM.Seconds(), t.GEMM.Seconds(), t.Comm.Seconds(), t.DP.Seconds(), other.Seconds(),
		t.SampleWait.Seconds(), t.SampleBuild.Seconds(), eval.Seconds(), elapsed.Seconds(),
		em.Loss, float64(t.PMMBytes), float64(bytes[0]), float64(bytes[1]),
		float64(evalBytes), float64(t.ChunkBytes),
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
