package main

import (
	"fmt"
	"io"

	"scalegnn/collectives"
	"scalegnn/collectives/mpi"
)

// runSelftest runs the collectives conformance suite over MPI_COMM_WORLD.
func runSelftest(stderr io.Writer) int {
	world, err := mpi.Init()
	if err != nil {
		fmt.Fprintf(stderr, "scalegnn: %v\n", err)
		return 1
	}
	err = collectives.Conformance(world)
	if agreeFailed(world, err, stderr) {
		return finalize(1, stderr)
	}
	if world.Rank() == 0 {
		fmt.Fprintf(stderr, "collectives conformance: ok on %d ranks\n", world.Size())
	}
	return finalize(0, stderr)
}
