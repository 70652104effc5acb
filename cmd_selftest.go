package main

import (
	"fmt"
	"io"

	"scalegnn/cagnet"
	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/internal/launch"
)

// runSelftest checks the installation end to end over MPI_COMM_WORLD: the
// collectives conformance suite, then the model conformance suite
// (gcn.DefaultConformance) on every grid of the world size — full-graph
// steps where Gd = 1, data-parallel mini-batch steps in float32 and bf16
// where Gd > 1 — each rank checking its own blocks against the serial
// float64 reference; then 1.5D (CAGNET) full-graph and mini-batch steps
// with data-parallel replicas the same way.
func runSelftest(stderr io.Writer) launch.ExitCode {
	return launch.WithMPI(stderr, func(world collectives.Comm, agree func(error) error) error {
		if err := agree(collectives.Conformance(world)); err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Fprintf(stderr, "collectives conformance: ok on %d ranks\n", world.Size())
		}
		if err := agree(firstOf(gcn.Conformance(world, device.Host(1), gcn.DefaultConformance()))); err != nil {
			return err
		}
		if err := agree(firstOf(cagnet.Conformance(world, device.Host(1)))); err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Fprintf(stderr, "1.5d (CAGNET) vs serial reference: ok on every replication dividing %d ranks (%d cases: GCN, SAGE and GAT, none and single permutation, dropout, bf16)\n",
				world.Size(), len(cagnet.Cases(world.Size())))
		}
		if err := agree(firstOf(cagnet.ResumeConformance(world, device.Host(1)))); err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Fprintf(stderr, "1.5d resume from the kept state: ok (replication from -> to %v: bit for bit onto the same c, within %g onto another; GCN, SAGE and GAT)\n",
				cagnet.ResumeCases(world.Size()), cagnet.ConformanceTol)
		}
		// 1.5D mini-batches with Gd replicas (every Gd > 1 dividing the
		// world), held to gcn's data-parallel reference.
		if err := agree(firstOf(cagnet.BatchConformance(world, device.Host(1)))); err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Fprintf(stderr, "1.5d mini-batches with data-parallel replicas vs serial reference: ok on every Gd > 1 and replication of %d ranks (%d cases: GCN, SAGE and GAT, none and single permutation, dropout, bf16)\n",
				world.Size(), len(cagnet.BatchCases(world.Size())))
		}
		if world.Rank() == 0 {
			var full, dp []grid.Shape
			for _, s := range grid.Shapes(world.Size(), 0) {
				if s.D == 1 {
					full = append(full, s)
				} else {
					dp = append(dp, s)
				}
			}
			fmt.Fprintf(stderr, "model vs serial reference: ok on %d grids of %d ranks (%v)\n", len(full), world.Size(), full)
			if len(dp) > 0 {
				fmt.Fprintf(stderr, "data-parallel mini-batches vs serial reference (float32, and bf16 where x*y*z > 1): ok on %d grids of %d ranks (%v)\n",
					len(dp), world.Size(), dp)
			}
		}
		return nil
	})
}

// firstOf is the first of a rank's failing cases, and how many more there
// were, as one line.
func firstOf(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return fmt.Errorf("%w (and %d more failing cases on this rank)", errs[0], len(errs)-1)
}
