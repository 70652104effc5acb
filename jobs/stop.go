package jobs

import (
	"fmt"
	"math"

	"scalegnn/collectives"
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

// stopRule is train.target_acc and train.patience: whether an evaluation's
// validation accuracy ends training early. Every rank evaluates the same
// accuracy, so every rank stops at the same epoch.
type stopRule struct {
	target   float64 // 0: no target
	patience int     // 0: no patience limit
	best     float64
	seen     bool
	stale    int // evaluations since the best
}

// observe takes an evaluation's validation accuracy and returns why
// training stops now: StopTargetAcc, StopPatience, or "" to go on.
func (s *stopRule) observe(val float64) string {
	if !s.seen || val > s.best {
		s.best, s.seen, s.stale = val, true, 0
	} else {
		s.stale++
	}
	switch {
	case s.target > 0 && val >= s.target:
		return record.StopTargetAcc
	case s.patience > 0 && s.stale >= s.patience:
		return record.StopPatience
	}
	return ""
}
