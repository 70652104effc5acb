package main

import (
	"fmt"
	"io"

	"scalegnn/collectives"
	"scalegnn/internal/launch"
	"scalegnn/internal/node"
)

// runThreads prints every rank's node detection, one line per rank from
// rank 0, for checking a launcher's binding (make mpitest runs it under
// --bind-to core and --bind-to none).
func runThreads(stdout, stderr io.Writer) launch.ExitCode {
	return launch.WithMPI(stderr, func(world collectives.Comm, agree func(error) error) error {
		info, err := node.Detect(world)
		if err := agree(err); err != nil {
			return err
		}
		const fields = 4
		all := make([]int64, fields*world.Size())
		copy(all[fields*world.Rank():], []int64{int64(info.RanksPerNode), int64(info.Cores), int64(info.Sharing), int64(info.Threads)})
		if err := world.AllReduceI64(all, collectives.Sum); err != nil {
			return err
		}
		if world.Rank() == 0 {
			for r := range world.Size() {
				v := all[fields*r:]
				fmt.Fprintf(stdout, "rank %d: ranks_per_node=%d cores=%d sharing=%d threads=%d\n", r, v[0], v[1], v[2], v[3])
			}
		}
		return nil
	})
}
