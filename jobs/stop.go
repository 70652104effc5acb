package jobs

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/jobfile"
	"scalegnn/record"
)

// DivergedError ends a run whose training loss stopped being finite. Every
// rank returns it at the same step (checkStep), so the job can end cleanly
// everywhere with one message.
type DivergedError struct {
	Epoch, Step int     // 1-based epoch, 0-based optimizer step since the start
	Loss        float64 // the loss seen (NaN or ±Inf), or NaN when another replica's was
	LR          float64 // optimizer.lr, for the hint
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("training diverged at epoch %d, step %d: the loss is %v; lower optimizer.lr (now %g) and run again",
		e.Epoch, e.Step, e.Loss, e.LR)
}

// checkStep ends the run after a step whose loss is NaN or ±Inf
// (DivergedError), or when a signal asked the job to stop
// (InterruptedError, returned with pos for the caller to checkpoint).
//
// The loss is all-reduced inside a replica, so the ranks of a replica see
// the same value and decide alike. Replicas (grid.d > 1) train on different
// batches, and a signal may reach only some ranks, so the ranks agree on
// both flags in one 16-byte all-reduce over the world per step (when
// grid.d > 1 or signals are watched). Gradients are not scanned: a
// non-finite gradient makes the update non-finite (Adam's m/√v is NaN,
// SGD's p − lr·g ±Inf), and the data-parallel all-reduce carries it into
// every replica, so the next step's loss is non-finite and stops the run
// there, one step later, at no cost to the steps that stay finite.
func (r *runState) checkStep(epoch, step int, loss float64) error {
	bad := math.IsNaN(loss) || math.IsInf(loss, 0)
	sig := ""
	if r.j.Interrupt != nil {
		sig = r.j.Interrupt()
	}
	if r.j.Grid.Shape.D > 1 || r.j.Interrupt != nil {
		flag := []float64{0, 0}
		if bad {
			flag[0] = 1
		}
		if sig != "" {
			flag[1] = 1
		}
		if err := r.j.world.AllReduceF64(flag, collectives.Max); err != nil {
			return err
		}
		if flag[0] != 0 && !bad {
			bad, loss = true, math.NaN()
		}
		if flag[1] != 0 && sig == "" {
			sig = "a signal to another rank"
		}
	}
	if bad {
		return &DivergedError{Epoch: epoch, Step: step, Loss: loss, LR: r.j.Cfg.Optimizer.LR}
	}
	if sig != "" {
		return &InterruptedError{Signal: sig, Epoch: epoch, Step: step + 1}
	}
	return nil
}

// stopRule is train.target_acc, train.patience and train.early_stop: the
// one place that decides, from an evaluation's validation accuracy and
// loss, whether it is the model to keep (summary.json's best_epoch) and
// whether training stops early. Every rank evaluates the same accuracy and
// loss, so every rank stops at the same epoch.
//
// train.early_stop = "val_acc" (lossAcc false): an evaluation improves
// when its accuracy is higher than every earlier one, and is then kept.
// "val_loss_acc" (lossAcc true; Veličković et al. 2018, GAT): it improves
// when its accuracy is >= the best so far or its loss <= the lowest so
// far, and is kept when both hold. Patience counts the evaluations since
// the last improvement.
type stopRule struct {
	target   float64 // 0: no target
	patience int     // 0: no patience limit
	lossAcc  bool    // train.early_stop = "val_loss_acc"
	best     float64 // the highest validation accuracy (when seen)
	bestLoss float64 // the lowest validation loss (when seen; lossAcc)
	seen     bool
	stale    int // evaluations since the last improvement
}

// newStopRule is the job's rule.
func newStopRule(t jobfile.TrainConfig) stopRule {
	return stopRule{target: t.TargetAcc, patience: t.Patience, lossAcc: t.EarlyStop == jobfile.EarlyStopValLossAcc}
}

// evaluate takes an evaluation's validation accuracy and loss and returns
// whether it becomes the kept model and why training stops now:
// StopTargetAcc, StopPatience, or "" to go on.
func (s *stopRule) evaluate(val, loss float64) (keep bool, why string) {
	switch {
	case !s.seen:
		keep = true
		s.best, s.bestLoss, s.seen, s.stale = val, loss, true, 0
	case s.lossAcc:
		accOK, lossOK := val >= s.best, loss <= s.bestLoss
		if accOK || lossOK {
			keep = accOK && lossOK
			s.best, s.bestLoss, s.stale = max(s.best, val), min(s.bestLoss, loss), 0
		} else {
			s.stale++
		}
	case val > s.best:
		keep = true
		s.best, s.stale = val, 0
	default:
		s.stale++
	}
	switch {
	case s.target > 0 && val >= s.target:
		return keep, record.StopTargetAcc
	case s.patience > 0 && s.stale >= s.patience:
		return keep, record.StopPatience
	}
	return keep, ""
}

// observe is evaluate for an evaluation without a validation loss.
func (s *stopRule) observe(val float64) string {
	_, why := s.evaluate(val, math.NaN())
	return why
}

// saveTo keeps the rule's state in a checkpoint's run progress.
func (s stopRule) saveTo(p *runProgress) {
	p.StopBest, p.StopSeen, p.Stale, p.StopBestLoss = s.best, s.seen, s.stale, nil
	if l := s.bestLoss; !math.IsNaN(l) && !math.IsInf(l, 0) {
		p.StopBestLoss = &l
	}
}

// loadFrom restores the state saveTo kept (the job's rule and limits
// stay the resumed job's).
func (s *stopRule) loadFrom(p runProgress) {
	s.best, s.seen, s.stale, s.bestLoss = p.StopBest, p.StopSeen, p.Stale, math.Inf(1)
	if p.StopBestLoss != nil {
		s.bestLoss = *p.StopBestLoss
	}
}
