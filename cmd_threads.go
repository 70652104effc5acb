package main

import (
	"fmt"
	"io"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/internal/node"
)

// rankThreads returns the kernel threads of this rank: explicit (the job
// file's runtime.threads, calibrate's -threads) when above 0, otherwise
// what node.Detect found.
func rankThreads(explicit int, info node.Info) int {
	if explicit > 0 {
		return explicit
	}
	return info.Threads
}

// nodeFields are the start-up log fields of the node detection: the
// ranks on rank 0's node, its cores and the ranks sharing them, the
// threads every rank runs (one number, or the range when ranks differ)
// and the BLAS library with its own threads.
func nodeFields(info node.Info, threads int, blas string) []zap.Field {
	fs := []zap.Field{zap.Int("ranks_per_node", info.RanksPerNode), zap.Int("cores", info.Cores),
		zap.Int("ranks_sharing_cores", info.Sharing), zap.Int("threads_per_rank", threads)}
	if info.MinThreads != info.MaxThreads {
		fs = append(fs, zap.String("threads_range", fmt.Sprintf("%d-%d", info.MinThreads, info.MaxThreads)))
	}
	return append(fs, zap.String("blas", blas))
}

// runThreads prints every rank's node detection, one line per rank from
// rank 0, for checking a launcher's binding (make mpitest runs it under
// --bind-to core and --bind-to none).
func runThreads(stdout, stderr io.Writer) int {
	return withMPI(stderr, func(world collectives.Comm, agree func(error) error) error {
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
