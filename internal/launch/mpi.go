package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"scalegnn/collectives"
	"scalegnn/collectives/mpi"
)

// ErrAgreed is what agree returns on every rank when some rank failed: the
// failure was reported once, and the command ends cleanly on every rank.
// A body that reported a failure every rank saw itself (a diverged loss)
// returns it too.
var ErrAgreed = errors.New("a rank failed (reported above)")

// launchErrorGrace is how long the launcher's other ranks wait before
// they exit on a wrong launch, so that rank 0's line comes first.
const launchErrorGrace = 5 * time.Second

// WithMPI runs a command that needs MPI on this rank: it starts MPI, runs
// body with the world, and ends MPI as body's outcome asks.
//
// body calls agree with the error of each step that every rank takes
// together (reading the job file, building the data, a check): if any
// rank failed, the lowest failing rank prints its error and agree returns
// ErrAgreed on every rank, for body to return. Then every rank finalizes
// MPI and WithMPI returns ExitFailed, so that a mistake every rank makes
// (a bad job file) ends the job once, cleanly, with one message. Any
// other error body returns is this rank's alone (say, in training, when
// the other ranks may be blocked in a collective): WithMPI prints it and
// aborts the job. So does a panic, as an internal error (ExitInternal).
// A nil error finalizes and returns ExitOK.
//
// Before MPI starts, a node that runs more ranks than a rank has cores
// gets Open MPI's yield setting (or, with another MPI, one line saying
// what to do): see yieldPlan. A launch that MPI did not join (a wrong
// srun --mpi) ends with the launcher's rank 0 saying so (mpi.LaunchError).
func WithMPI(stderr io.Writer, body func(world collectives.Comm, agree func(error) error) error) (code ExitCode) {
	prepareYield(stderr) // before MPI_Init, which reads it
	world, err := mpi.Init()
	var le *mpi.LaunchError
	if err != nil {
		if !errors.As(err, &le) || LauncherRank() == 0 {
			// A wrong launch is said once, by the launcher's rank 0,
			// not by each of the worlds of one rank it made.
			fmt.Fprintf(stderr, "scalegnn: %v\n", err)
		} else {
			// The others leave after rank 0 has said it: mpirun kills
			// the job at the first non-zero exit, and a silent rank
			// leaving first took rank 0's line with it (seen on a
			// loaded machine).
			time.Sleep(launchErrorGrace)
		}
		return ExitFailed
	}
	rank := world.Rank()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "scalegnn: rank %d: internal error: %v (set SCALEGNN_TRACEBACK=1 for a stack trace)\n", rank, r)
			if os.Getenv("SCALEGNN_TRACEBACK") != "" {
				debug.PrintStack()
			}
			world.Abort(int(ExitInternal))
		}
	}()
	agree := func(err error) error {
		if agreeFailed(world, err, stderr) {
			return ErrAgreed
		}
		return nil
	}
	switch err := body(world, agree); {
	case err == nil:
		return finalize(ExitOK, stderr)
	case errors.Is(err, ErrAgreed), errors.Is(err, collectives.ErrOtherRank):
		// The failing rank reports (and aborts) for everyone.
		return finalize(ExitFailed, stderr)
	default:
		fmt.Fprintf(stderr, "scalegnn: rank %d: %v\n", rank, err)
		world.Abort(int(ExitFailed))
		return ExitFailed
	}
}

// agreeFailed tells every rank whether any rank failed (err != nil) and has
// the lowest failing rank print its error, so that a mistake every rank
// makes (a bad job file) is reported once.
func agreeFailed(world collectives.Comm, err error, stderr io.Writer) bool {
	first := []int64{int64(world.Size())}
	if err != nil {
		first[0] = int64(world.Rank())
	}
	if aerr := world.AllReduceI64(first, collectives.Min); aerr != nil {
		fmt.Fprintf(stderr, "scalegnn: rank %d: %v\n", world.Rank(), aerr)
		world.Abort(int(ExitFailed))
	}
	if first[0] == int64(world.Size()) {
		return false
	}
	if err != nil && first[0] == int64(world.Rank()) {
		if world.Size() > 1 {
			fmt.Fprintf(stderr, "scalegnn: rank %d: %v\n", world.Rank(), err)
		} else {
			fmt.Fprintf(stderr, "scalegnn: %v\n", err)
		}
	}
	return true
}

// finalize ends MPI on this rank and returns code, or ExitFailed when
// MPI_Finalize itself failed and code said success.
func finalize(code ExitCode, stderr io.Writer) ExitCode {
	if err := mpi.Finalize(); err != nil {
		fmt.Fprintf(stderr, "scalegnn: %v\n", err)
		return max(code, ExitFailed)
	}
	return code
}

// LauncherRank returns this process's rank as mpirun or srun announce it in
// the environment, or 0 when started alone. It needs no MPI: commands use
// it before MPI starts, to have rank 0 alone print a usage error.
func LauncherRank() int {
	for _, v := range []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil {
			return n
		}
	}
	return 0
}
