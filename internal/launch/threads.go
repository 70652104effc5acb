package launch

import (
	"fmt"

	"go.uber.org/zap"

	"scalegnn/internal/node"
)

// RankThreads returns the kernel threads of this rank: explicit (the job
// file's runtime.threads, calibrate's -threads) when above 0, otherwise
// what node.Detect found.
func RankThreads(explicit int, info node.Info) int {
	if explicit > 0 {
		return explicit
	}
	return info.Threads
}

// NodeFields are the start-up log fields of the node detection: the
// ranks on rank 0's node, its cores and the ranks sharing them, the
// threads every rank runs (one number, or the range when ranks differ)
// and the BLAS library with its own threads.
func NodeFields(info node.Info, threads int, blas string) []zap.Field {
	fs := []zap.Field{zap.Int("ranks_per_node", info.RanksPerNode), zap.Int("cores", info.Cores),
		zap.Int("ranks_sharing_cores", info.Sharing), zap.Int("threads_per_rank", threads)}
	if info.MinThreads != info.MaxThreads {
		fs = append(fs, zap.String("threads_range", fmt.Sprintf("%d-%d", info.MinThreads, info.MaxThreads)))
	}
	return append(fs, zap.String("blas", blas))
}
