package launch

// ExitCode is the exit status of a scalegnn command. Every command
// returns one of the constants below, so that scripts and the README
// ("Output") can rely on them; the numbers never change.
type ExitCode int

const (
	// ExitOK: the command did what it was asked (a training run also
	// when train.target_acc or train.patience stopped it early).
	ExitOK ExitCode = 0
	// ExitFailed: an error: a bad job file or data, a used output
	// directory, or a failure in training. Every rank exits with it
	// after one line from the lowest failing rank (WithMPI).
	ExitFailed ExitCode = 1
	// ExitUsage: a bad command line, found before MPI starts.
	ExitUsage ExitCode = 2
	// ExitInternal: a panic, an internal error; WithMPI aborts the job
	// with it.
	ExitInternal ExitCode = 3
	// ExitDiverged: the loss became NaN or Inf; every rank stopped at
	// the same step (summary.json: "diverged").
	ExitDiverged ExitCode = 4
	// ExitInterrupted: SIGTERM, SIGUSR1 or SIGINT stopped the run at a
	// step boundary (summary.json: "interrupted", with the checkpoint to
	// resume from when [checkpoint] is set); another signal exits at
	// once with it too (Watch).
	ExitInterrupted ExitCode = 5
	// ExitStalled: the watchdog ended the job: a rank made no progress
	// within runtime.stall_timeout (StartWatchdog).
	ExitStalled ExitCode = 6
)
