package jobs

import (
	"time"

	"scalegnn/gcn"
	"scalegnn/record"
)

// recordEval records an evaluated epoch's accuracies and validation loss:
// in its metrics line and as the run's final ones. Whether the evaluation
// is the model to keep (best_epoch) is the stop rule's to say, in
// epochDone.
func (r *runState) recordEval(em *record.EpochMetrics, acc gcn.Accuracy) {
	res := r.res
	r.mu.Lock()
	defer r.mu.Unlock()
	em.SetAccuracies(acc.Train, acc.Val, acc.Test)
	em.SetValLoss(acc.ValLoss)
	res.Final = record.Accuracy{Train: acc.Train, Val: acc.Val, Test: acc.Test}
}

// finishEpoch is the end of an epoch in every training loop: the epoch is
// recorded (runState.epochDone: log, metrics, train.target_acc and
// patience), then a checkpoint is written when [checkpoint] asks for one
// and training goes on. step is the optimizer steps taken so far; last is
// when the previous checkpoint was written, updated when one is. It
// returns whether training stops after this epoch.
func (j *Job) finishEpoch(run *runState, em record.EpochMetrics, step int, last *time.Time) (stop bool, err error) {
	cfg := j.Cfg
	if stop, err = run.epochDone(em); err != nil {
		return false, err
	}
	due, err := j.checkpointDue(em.Epoch, *last)
	if err != nil {
		return false, err
	}
	if due && !stop && em.Epoch < cfg.Train.Epochs {
		if _, err := j.saveCheckpoint(cfg.CheckpointDir(), cfg.Checkpoint.Keep, position{step: step, epoch: em.Epoch}, run); err != nil {
			return false, err
		}
		*last = time.Now()
	}
	return stop, nil
}

// finishTraining writes output.save_model's model after the last epoch:
// a checkpoint of the trained state, kept alone in output.dir/model.
func (j *Job) finishTraining(run *runState, step int) error {
	if !j.Cfg.Output.SaveModel {
		return nil
	}
	_, err := j.saveCheckpoint(j.Cfg.ModelDir(), 1, position{step: step, epoch: run.res.EpochsRun}, run)
	return err
}
