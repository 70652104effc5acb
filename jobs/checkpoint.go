package jobs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"

	"scalegnn/checkpoint"
	"scalegnn/collectives"
	"scalegnn/jobfile"
	"scalegnn/record"
)

// runProgress is the part of a run's bookkeeping a checkpoint carries, so
// that a resumed run's summary (best epoch, time to target, early stop)
// continues the interrupted one's.
type runProgress struct {
	Res      record.Result `json:"result"`
	StopBest float64       `json:"stop_best"`
	StopSeen bool          `json:"stop_seen"`
	Stale    int           `json:"stop_stale"`
	// StopBestLoss is the lowest validation loss train.early_stop =
	// "val_loss_acc" has seen; nil when it is not finite, and in
	// checkpoints written before it was kept (read as +Inf: the loss's
	// record starts afresh).
	StopBestLoss *float64 `json:"stop_best_loss,omitempty"`
	TrainSec     float64  `json:"train_s"` // training time before this run
}

// position is where training stands: the optimizer steps taken, the
// epochs completed, and the steps and summed loss of the epoch under way.
type position struct {
	step, epoch, epochSteps int
	lossSum                 float64
}

// fingerprint returns the dataset's fingerprint, computed once
// (collectively: every rank calls it at the same point).
func (j *Job) fingerprint() (checkpoint.Dataset, error) {
	if j.dataset == nil {
		f, err := j.method.Fingerprint()
		if err != nil {
			return checkpoint.Dataset{}, err
		}
		d := checkpoint.DatasetOf(f, j.Cfg.Permute.Scheme.String(), j.Cfg.Permute.Seed)
		j.dataset = &d
	}
	return *j.dataset, nil
}

// saveCheckpoint writes a checkpoint of the model at pos into root,
// collectively, and logs it on rank 0.
func (j *Job) saveCheckpoint(root string, keep int, pos position, r *runState) (string, error) {
	ds, err := j.fingerprint()
	if err != nil {
		return "", err
	}
	var run []byte
	if r != nil {
		p := runProgress{Res: *r.res, TrainSec: r.before + time.Since(r.start).Seconds()}
		r.stop.saveTo(&p)
		if run, err = json.Marshal(p); err != nil {
			return "", err
		}
	}
	var cfg bytes.Buffer
	if err := j.Cfg.WriteTOML(&cfg); err != nil {
		return "", err
	}
	// Each rank holds its own replica's partial loss of the epoch under
	// way: the checkpoint keeps every rank's, so that a resume on the same
	// ranks logs that epoch's loss as the uninterrupted run does.
	sums := make([]float64, j.world.Size())
	sums[j.world.Rank()] = pos.lossSum
	if err := j.world.AllReduceF64(sums, collectives.Sum); err != nil {
		return "", err
	}
	man := checkpoint.Manifest{Step: pos.step, Epoch: pos.epoch, EpochSteps: pos.epochSteps, EpochLossSum: mean(sums),
		EpochLossSums: sums, OptimizerStep: j.method.OptimizerSteps(), Dataset: ds,
		Model: checkpoint.ModelOf(j.method.ModelConfig()), Grid: j.method.GridName(), Run: run}
	t0 := time.Now()
	dir, err := j.method.SaveParams(root, keep, man, cfg.Bytes())
	if err != nil {
		return "", err
	}
	if r != nil && root == j.Cfg.CheckpointDir() {
		r.mu.Lock()
		r.newest = dir
		r.mu.Unlock()
	}
	if j.world.Rank() == 0 {
		j.log.Info("checkpoint", zap.String("dir", dir), zap.Int("epoch", pos.epoch), zap.Int("step", pos.step),
			zap.Duration("took", time.Since(t0).Round(time.Millisecond)))
	}
	return dir, nil
}

// ResolveCheckpoint turns -resume's argument into a checkpoint directory,
// collectively: "latest" is the newest complete, verified checkpoint in
// the job's checkpoint directory, a directory holding checkpoints their
// newest good one, anything else the directory itself. Rank 0 decides and
// broadcasts, so every rank resumes from the same one.
func ResolveCheckpoint(world collectives.Comm, cfg *jobfile.Config, arg string, log *zap.Logger) (string, error) {
	var dir string
	var err error
	if world.Rank() == 0 {
		dir, err = resolveLocal(cfg, arg, log)
		if err == nil && len(dir) >= maxPath {
			err = fmt.Errorf("checkpoint %s: path longer than %d bytes", dir, maxPath-1)
		}
	}
	if err := collectives.AgreeError(world, err); err != nil {
		return "", err
	}
	b := make([]byte, maxPath)
	copy(b, dir)
	if err := world.BcastBytes(b, 0); err != nil {
		return "", err
	}
	return string(bytes.TrimRight(b, "\x00")), nil
}

// maxPath bounds the checkpoint path rank 0 broadcasts.
const maxPath = 4096

func resolveLocal(cfg *jobfile.Config, arg string, log *zap.Logger) (string, error) {
	root := arg
	if arg == "latest" {
		root = cfg.CheckpointDir()
	} else if _, err := checkpoint.ReadManifest(arg); err == nil {
		return arg, nil
	}
	dir, skipped, err := checkpoint.Latest(root)
	for _, s := range skipped {
		log.Warn("skipping checkpoint", zap.Error(s))
	}
	if err != nil && arg != "latest" {
		// Not a directory of checkpoints: report what is wrong with it as
		// a checkpoint.
		if _, verr := checkpoint.Verify(arg); verr != nil {
			return "", verr
		}
	}
	return dir, err
}

// LoadCheckpoint restores the model from the checkpoint in dir,
// collectively, after checking that it was trained on the same dataset
// and model: another one is refused with one line naming the manifest and
// the difference. The next Train continues from the checkpoint's step;
// OpenOutput must be called with OutputOptions.Resume.
func (j *Job) LoadCheckpoint(dir string) (*checkpoint.Manifest, error) {
	ds, err := j.fingerprint()
	if err != nil {
		return nil, err
	}
	var man *checkpoint.Manifest
	if j.world.Rank() == 0 {
		man, err = checkpoint.Verify(dir)
		if err == nil {
			err = man.CheckCompatible(dir, ds, checkpoint.ModelOf(j.method.ModelConfig()))
		}
	}
	if err := collectives.AgreeError(j.world, err); err != nil {
		return nil, err
	}
	if man == nil {
		if man, err = checkpoint.ReadManifest(dir); err != nil {
			return nil, err
		}
	}
	if err := j.method.LoadParams(dir, man); err != nil {
		return nil, err
	}
	j.resume, j.resumeDir = man, dir
	return man, nil
}

// checkEpochsLeft refuses to resume from a checkpoint with no epoch left
// to train: the run would record more epochs than train.epochs, and cut
// metrics.jsonl back to the checkpoint. (predict loads such checkpoints:
// the final model is one.)
func checkEpochsLeft(dir string, man *checkpoint.Manifest, cfg *jobfile.Config) error {
	if man.Epoch < cfg.Train.Epochs {
		return nil
	}
	return fmt.Errorf("checkpoint %s is after epoch %d, and train.epochs = %d leaves nothing to train: raise train.epochs above %d to train on from it",
		dir, man.Epoch, cfg.Train.Epochs, man.Epoch)
}

// resumeFrom applies the loaded checkpoint to a new run: its position and
// its bookkeeping.
//
// The epoch under way continues with this rank's own partial loss when
// the checkpoint was written by as many ranks (the same grid gives the
// uninterrupted run's loss exactly); on another grid the replicas differ,
// and every rank takes the mean over the writing ranks.
func (r *runState) resumeFrom(man *checkpoint.Manifest, world collectives.Comm) (position, error) {
	pos := position{step: man.Step, epoch: man.Epoch, epochSteps: man.EpochSteps, lossSum: man.EpochLossSum}
	if len(man.EpochLossSums) == world.Size() {
		pos.lossSum = man.EpochLossSums[world.Rank()]
	}
	if len(man.Run) == 0 {
		return pos, nil
	}
	var p runProgress
	if err := json.Unmarshal(man.Run, &p); err != nil {
		return pos, fmt.Errorf("checkpoint manifest: run: %v", err)
	}
	res := r.res
	r.mu.Lock()
	defer r.mu.Unlock()
	res.EpochsRun, res.FinalLoss, res.Final = p.Res.EpochsRun, p.Res.FinalLoss, p.Res.Final
	res.BestValAcc, res.TestAtBest, res.BestEpoch = p.Res.BestValAcc, p.Res.TestAtBest, p.Res.BestEpoch
	res.TimeToTargetS, res.TargetEpoch = p.Res.TimeToTargetS, p.Res.TargetEpoch
	r.stop.loadFrom(p)
	r.before = p.TrainSec
	return pos, nil
}

// InterruptedError ends a run that a signal stopped: every rank agreed on
// it at the same step boundary.
type InterruptedError struct {
	Signal     string
	Epoch      int    // the epoch under way (1-based)
	Step       int    // optimizer steps taken
	Checkpoint string // "" without [checkpoint]
}

func (e *InterruptedError) Error() string {
	if e.Checkpoint == "" {
		return fmt.Sprintf("stopped by %s at epoch %d, step %d; no checkpoint: the job sets no [checkpoint] (see docs/jobfile.md)", e.Signal, e.Epoch, e.Step)
	}
	return fmt.Sprintf("stopped by %s at epoch %d, step %d; checkpoint %s", e.Signal, e.Epoch, e.Step, e.Checkpoint)
}

// mean is the mean of xs (0 for none).
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
