package launch

import (
	"os"
	"runtime/debug"

	"scalegnn/internal/memlimit"
	"scalegnn/jobfile"
	"scalegnn/plan"
)

// SoftMemoryLimit sets Go's soft memory limit (runtime/debug.SetMemoryLimit)
// to what this rank may use: the limit the memory check judged the job
// against (plan.MemoryLimit: grid.mem_per_rank, the cgroup, MemAvailable or
// ulimit -v, shared by the ranks of the node). By default Go's collector
// lets the heap grow to twice its live size before it collects, so a rank
// whose live memory fits its share could still be killed by the kernel's
// OOM killer on a node its ranks fill (README, "Loading"); with the limit
// the collector runs more often as the heap nears it instead. A GOMEMLIMIT
// in the environment is the user's choice and is left alone. It returns
// the limit set (0: none) and where it came from.
func SoftMemoryLimit(cfg *jobfile.Config, ranksPerNode int) (int64, string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, "GOMEMLIMIT in the environment"
	}
	limits, err := memlimit.Detect("/", memlimit.AddressSpace)
	if err != nil {
		return 0, ""
	}
	limit, from, ok, err := plan.MemoryLimit(cfg, ranksPerNode, limits)
	if err != nil || !ok || limit <= 0 {
		return 0, ""
	}
	debug.SetMemoryLimit(limit)
	return limit, from
}
