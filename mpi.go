package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"

	"scalegnn/collectives"
	"scalegnn/collectives/mpi"
)

// errAgreed is what agree returns on every rank when some rank failed: the
// failure was reported once, and the command ends cleanly on every rank.
var errAgreed = errors.New("a rank failed (reported above)")

// withMPI runs a command that needs MPI on this rank: it starts MPI, runs
// body with the world, and ends MPI as body's outcome asks.
//
// body calls agree with the error of each step that every rank takes
// together (reading the job file, building the data, a check): if any
// rank failed, the lowest failing rank prints its error and agree returns
// errAgreed on every rank, for body to return. Then every rank finalizes
// MPI and withMPI returns 1, so that a mistake every rank makes (a bad job
// file) ends the job once, cleanly, with one message. Any other error body
// returns is this rank's alone (say, in training, when the other ranks may
// be blocked in a collective): withMPI prints it and aborts the job. So
// does a panic, as an internal error. A nil error finalizes and returns 0.
func withMPI(stderr io.Writer, body func(world collectives.Comm, agree func(error) error) error) (code int) {
	world, err := mpi.Init()
	if err != nil {
		fmt.Fprintf(stderr, "scalegnn: %v\n", err)
		return 1
	}
	rank := world.Rank()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "scalegnn: rank %d: internal error: %v (set SCALEGNN_TRACEBACK=1 for a stack trace)\n", rank, r)
			if os.Getenv("SCALEGNN_TRACEBACK") != "" {
				debug.PrintStack()
			}
			world.Abort(3)
		}
	}()
	agree := func(err error) error {
		if agreeFailed(world, err, stderr) {
			return errAgreed
		}
		return nil
	}
	switch err := body(world, agree); {
	case err == nil:
		return finalize(0, stderr)
	case errors.Is(err, errAgreed), errors.Is(err, collectives.ErrOtherRank):
		// The failing rank reports (and aborts) for everyone.
		return finalize(1, stderr)
	default:
		fmt.Fprintf(stderr, "scalegnn: rank %d: %v\n", rank, err)
		world.Abort(1)
		return 1
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
		world.Abort(1)
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

func finalize(code int, stderr io.Writer) int {
	if err := mpi.Finalize(); err != nil {
		fmt.Fprintf(stderr, "scalegnn: %v\n", err)
		return max(code, 1)
	}
	return code
}

// launcherRank returns this process's rank as mpirun or srun announce it in
// the environment, or 0 when started alone.
func launcherRank() int {
	for _, v := range []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil {
			return n
		}
	}
	return 0
}
