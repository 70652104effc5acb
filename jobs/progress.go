package jobs

import (
	"fmt"

	"scalegnn/collectives"
	"scalegnn/internal/watchdog"
)

// watched is a communicator that carries its rank's watchdog
// (watchdog.Comm): the world Setup is given, when the job runs with one.
type watched interface{ Watchdog() *watchdog.Watchdog }

// watchdog returns the rank's watchdog, or nil (which ignores reports)
// when the world carries none.
func (j *Job) watchdog() *watchdog.Watchdog {
	if w, ok := j.world.(watched); ok {
		return w.Watchdog()
	}
	return nil
}

// enter tells the watchdog that the rank starts the step (step >= 0) or
// the evaluation (step < 0) of epoch; its messages name it.
func (j *Job) enter(epoch, step int) {
	w := j.watchdog()
	if w == nil {
		return
	}
	if step < 0 {
		w.Enter(watchdog.Eval, fmt.Sprintf("epoch %d evaluation", epoch))
		return
	}
	w.Enter(watchdog.Step, fmt.Sprintf("epoch %d step %d", epoch, step))
}

// progressed tells the watchdog that the step or evaluation entered last
// has completed.
func (j *Job) progressed() { j.watchdog().Done() }

// loadProgress returns what a loader calls with each piece of the load it
// completes (prepared.LoadOptions.Progress, the stages of memorySource):
// progress for world's watchdog, or nothing when world carries none.
func loadProgress(world collectives.Comm) func(what string) {
	var w *watchdog.Watchdog
	if c, ok := world.(watched); ok {
		w = c.Watchdog()
	}
	return w.Loaded
}
