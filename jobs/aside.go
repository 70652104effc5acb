package jobs

import (
	"fmt"
	"os"
	"path/filepath"

	"scalegnn/record"
)

// Interrupting records at once, in summary.json, that signal sig asked the
// run to stop: status "interrupted", a message saying the run stops at the
// next step boundary, and the newest checkpoint this run wrote or resumed
// from. A launcher may kill the ranks before that boundary (mpirun sends
// SIGKILL 1 s after the SIGTERM it forwards), and then the summary still
// tells the truth. At the boundary the loop writes the stop's checkpoint
// and the final status as before (InterruptedError).
//
// It is safe to call from another goroutine than the training loop's (the
// signal watcher's hook): it copies the run's state under its mutex, and
// WriteSummary replaces the file atomically. It writes on rank 0 only, and
// nothing when no run is under way or the run has ended.
func (j *Job) Interrupting(sig string) error {
	r := j.live.Load()
	if r == nil || r.metrics == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return nil
	}
	res := *r.res
	res.Status, res.Checkpoint = record.StatusInterrupted, r.newest
	msg := fmt.Sprintf("%s received after epoch %d: stopping at the next step boundary", sig, res.EpochsRun)
	switch {
	case !j.Cfg.Checkpoint.Enabled():
		msg += "; the job sets no [checkpoint], so it cannot be resumed"
	case r.newest == "":
		msg += ", with a checkpoint there; none before it to resume from if the job is killed first"
	default:
		msg += ", with a checkpoint there; if the job is killed first, resume from " + r.newest
	}
	res.Message = msg
	return record.WriteSummary(j.Cfg.Output.Dir, &res)
}

// Stalled records in summary.json that the watchdog ends the job (status
// "stalled", its line as the message), just before it aborts every rank.
// Any rank's watchdog may fire first, and its abort kills rank 0: so every
// rank that sees the run's summary.json (on a shared file system) writes
// it, from its own copy of the run's state (every rank keeps the same).
// Nothing is written before OpenOutput, when summary.json does not yet
// exist, or after the run has ended. The run is then over: its own end
// writes nothing more.
func (j *Job) Stalled(msg string) error {
	r := j.live.Load()
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return nil
	}
	dir := j.Cfg.Output.Dir
	if r.metrics == nil {
		if _, err := os.Stat(filepath.Join(dir, record.SummaryFile)); err != nil {
			return nil
		}
	}
	r.ended = true
	res := *r.res
	res.Status, res.Message, res.Checkpoint = record.StatusStalled, msg, r.newest
	return record.WriteSummary(dir, &res)
}
