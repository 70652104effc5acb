// Command mpicheck runs the collectives conformance check on MPI:
//
//	mpirun -np 8 mpicheck
//
// It prints "collectives conformance: ok on N ranks" from rank 0 and exits
// 0. When results are wrong, every rank knows (Conformance agrees on it),
// prints its error and exits 1. When an MPI call fails on some rank, the
// ranks no longer make the same calls, so that rank prints the error and
// ends the job with MPI_Abort rather than leave its peers waiting.
package main

import (
	"errors"
	"fmt"
	"os"

	"scalegnn/collectives"
	"scalegnn/collectives/mpi"
)

func main() {
	world, err := mpi.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpicheck:", err)
		os.Exit(1)
	}
	err = collectives.Conformance(world)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpicheck:", err)
		if !errors.Is(err, collectives.ErrMismatch) {
			world.Abort(1)
		}
	}
	if ferr := mpi.Finalize(); ferr != nil {
		fmt.Fprintln(os.Stderr, "mpicheck:", ferr)
		os.Exit(1)
	}
	if err != nil {
		os.Exit(1)
	}
	if world.Rank() == 0 {
		fmt.Printf("collectives conformance: ok on %d ranks\n", world.Size())
	}
}
