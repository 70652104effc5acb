package jobs

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"go.uber.org/zap"

	"scalegnn/record"
)

// runState is a training run's bookkeeping beside the model: its Result so
// far, the early-stop rule, the progress line's pace, and on rank 0 the
// metrics file and summary.json. Job.OpenOutput makes one; Train takes it
// (beginRun), reports every step's loss (checkStep) and every epoch
// (epochDone) to it, and ends the run with end.
//
// A signal's handler and the watchdog rewrite summary.json from their own
// goroutines (aside.go): the training loop changes res, newest and ended
// only under mu, and the other goroutines read them only under it.
type runState struct {
	j       *Job
	opts    OutputOptions
	res     *record.Result
	stop    stopRule
	start   time.Time
	before  float64               // training seconds of the run before a resume
	metrics *record.MetricsWriter // rank 0 only: rank 0 writes the run's files
	lock    *record.Lock          // rank 0 only: output.dir's lock, held until end

	mu     sync.Mutex
	newest string // the newest checkpoint this run wrote or resumed from
	ended  bool   // summary.json has its final status

	// The epochs and their summed time since the last progress line.
	paceEpochs int
	paceSec    float64
}

// OpenOutput starts the run's output: on rank 0 it creates output.dir,
// takes its lock for the run, and writes summary.json with status
// "running", config.toml and an empty metrics file (refusing a directory
// that a live job holds or that holds another run, see CheckOutputDir). Call it once setup has succeeded on every rank, and have
// the ranks agree on its error: nothing is written before. Train calls it
// with the default options when it was not called.
func (j *Job) OpenOutput(opts OutputOptions) error {
	cfg := j.Cfg
	r := &runState{j: j, opts: opts, stop: newStopRule(cfg.Train),
		res: &record.Result{Status: record.StatusRunning, Epochs: cfg.Train.Epochs, Grid: j.Grid.Shape.String(), Ranks: j.world.Size(),
			Permutation: cfg.Permute.Scheme.String(), BestEpoch: -1, Mode: cfg.Train.Mode.String(), StepsPerEpoch: j.method.StepsPerEpoch(),
			Algorithm: string(cfg.Method().Algorithm()), Precision: cfg.Train.Precision.String()}}
	if c, ok := j.method.(replicator); ok {
		r.res.Replication = c.Replication()
	}
	if j.resume != nil {
		if err := checkEpochsLeft(j.resumeDir, j.resume, cfg); err != nil {
			return err // on every rank alike: each holds the manifest
		}
		r.newest = j.resumeDir
	}
	if j.world.Rank() == 0 {
		upTo := 0
		if j.resume != nil {
			upTo = j.resume.Epoch
		}
		out, err := createOutput(cfg, opts, upTo, r.res)
		for _, note := range out.notes {
			j.log.Warn(note)
		}
		if err != nil {
			return err
		}
		r.metrics, r.lock = out.metrics, out.lock
	}
	j.run = r
	j.live.Store(r)
	return nil
}

// beginRun returns the run OpenOutput started (opening it now if it was
// not) and starts its clock; the next Train opens a new run.
func (j *Job) beginRun() (*runState, error) {
	if j.run == nil {
		if err := j.OpenOutput(OutputOptions{}); err != nil {
			return nil, err
		}
	}
	r := j.run
	j.run = nil
	r.start = time.Now()
	return r, nil
}

// epochDone records a finished epoch: on evaluated epochs the stop rule
// (the kept model, early stopping) and time to target, and on rank 0 the
// log line and the metrics line. It returns whether training stops early
// after this epoch.
func (r *runState) epochDone(em record.EpochMetrics) (stop bool, err error) {
	res := r.res
	r.mu.Lock()
	defer r.mu.Unlock()
	res.EpochsRun, res.FinalLoss = em.Epoch, em.Loss
	r.paceEpochs++
	r.paceSec += em.EpochSec
	if em.ValAcc != nil {
		if t := r.stop.target; t > 0 && res.TimeToTargetS == nil && *em.ValAcc >= t {
			s := time.Since(r.start).Seconds()
			res.TimeToTargetS, res.TargetEpoch = &s, em.Epoch
		}
		loss := math.NaN()
		if em.ValLoss != nil {
			loss = *em.ValLoss
		}
		var keep bool
		keep, res.StopReason = r.stop.evaluate(*em.ValAcc, loss)
		if keep {
			res.BestValAcc, res.TestAtBest, res.BestEpoch = *em.ValAcc, 0, em.Epoch
			if em.TestAcc != nil {
				res.TestAtBest = *em.TestAcc
			}
		}
	}
	stop = res.StopReason != ""
	if r.metrics == nil {
		return stop, nil
	}
	r.logEpoch(em)
	return stop, r.metrics.Write(em)
}

// logEpoch logs an epoch on rank 0: with JSON logs, every epoch as fields;
// on the console, the progress line on evaluated epochs (the time split
// follows it with -v).
func (r *runState) logEpoch(em record.EpochMetrics) {
	log := r.j.log
	if r.opts.JSON {
		log.Info("epoch", EpochFields(em)...)
		return
	}
	if em.ValAcc != nil {
		log.Info(ProgressLine(em, r.res.Epochs, r.paceSec/float64(r.paceEpochs)))
		r.paceEpochs, r.paceSec = 0, 0
	}
	if r.opts.Verbose {
		log.Info("time split", EpochFields(em)...)
	}
}

// end finishes the run with Train's error: the result's times and status
// (completed, diverged, or failed with the message), and on rank 0 the
// metrics file closed, summary.json rewritten, output.dir's lock released
// and the final line logged. It returns err, or the error of writing the
// files when there was none.
func (r *runState) end(err error) error {
	res := r.res
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.j.live.CompareAndSwap(r, nil)
	if r.ended {
		// The watchdog recorded the stall; the job is being aborted.
		return err
	}
	r.ended = true
	res.TrainSec = r.before + time.Since(r.start).Seconds()
	if res.EpochsRun > 0 {
		res.MeanEpochS = res.TrainSec / float64(res.EpochsRun)
	}
	var diverged *DivergedError
	var interrupted *InterruptedError
	switch {
	case err == nil:
		res.Status = record.StatusCompleted
	case errors.As(err, &interrupted):
		res.Status, res.Message, res.Checkpoint = record.StatusInterrupted, err.Error(), interrupted.Checkpoint
	case errors.As(err, &diverged):
		res.Status, res.Message, res.FinalLoss = record.StatusDiverged, err.Error(), diverged.Loss
	default:
		res.Status, res.Message = record.StatusFailed, err.Error()
	}
	if r.metrics == nil {
		return err
	}
	werr := errors.Join(r.metrics.Close(), record.WriteSummary(r.j.Cfg.Output.Dir, res))
	if werr == nil {
		r.lock.Release() // kept when summary.json could not be written: EndedAbnormally tells
	}
	if err != nil {
		return err
	}
	if werr == nil {
		r.logDone()
	}
	return werr
}

// finish is every training loop's deferred end: run.end with the loop's
// error, through errp. A panic (a GPU out of memory, which the command
// reports as one line) is a failure too, not a completed run: it is
// recorded in summary.json, then goes on. Defer it directly (recover
// works only there).
func (r *runState) finish(errp *error) {
	if p := recover(); p != nil {
		_ = r.end(fmt.Errorf("%v", p))
		panic(p)
	}
	*errp = r.end(*errp)
}

// logDone logs the final line of a completed run.
func (r *runState) logDone() {
	res, log := r.res, r.j.log
	fields := []zap.Field{zap.Float64("test_acc", res.Final.Test), zap.Float64("val_acc", res.Final.Val),
		zap.Float64("train_acc", res.Final.Train), zap.Float64("mean_epoch_s", res.MeanEpochS),
		zap.String("metrics", r.metrics.Path())}
	if res.StopReason != "" {
		fields = append(fields, zap.String("stop_reason", res.StopReason))
	}
	if res.TimeToTargetS != nil {
		fields = append(fields, zap.Float64("time_to_target_s", *res.TimeToTargetS))
	}
	if r.opts.JSON {
		log.Info("done", append(fields, zap.Int("epochs_run", res.EpochsRun))...)
		return
	}
	log.Info(DoneLine(res, r.j.Cfg.Output.Dir))
}

// DoneLine is a completed run's last line on the console: epochs, time,
// final accuracies, the best validation epoch, why it stopped early and
// where its files are.
func DoneLine(res *record.Result, dir string) string {
	s := fmt.Sprintf("done  %d epochs in %s  acc train %.3f val %.3f test %.3f  best val %.3f at epoch %d (test %.3f)",
		res.EpochsRun, roundDuration(res.TrainSec), res.Final.Train, res.Final.Val, res.Final.Test,
		res.BestValAcc, res.BestEpoch, res.TestAtBest)
	switch res.StopReason {
	case record.StopTargetAcc:
		s += fmt.Sprintf("  target reached at epoch %d after %s", res.TargetEpoch, roundDuration(*res.TimeToTargetS))
	case record.StopPatience:
		s += "  stopped: no validation improvement (train.patience)"
	}
	return s + "  -> " + dir
}
