package launch

import (
	"scalegnn/collectives"
	"scalegnn/internal/memlimit"
	"scalegnn/internal/node"
	"scalegnn/jobfile"
	"scalegnn/plan"
)

// CheckMemory is the memory check before loading (plan.CheckMemory) with
// this machine's limits; with runtime.mem_check = false it checks only
// the address space of ulimit -v.
func CheckMemory(cfg *jobfile.Config, rank int, info node.Info) error {
	limits, err := memlimit.Detect("/", memlimit.AddressSpace)
	if err != nil {
		return err
	}
	return plan.CheckMemory(cfg, rank, info.RanksPerNode, limits)
}

// agreedLimits returns the memory limits of this machine per rank, the
// smallest over the ranks (plan.AgreeLimits), in which grid.auto chooses
// the same grid on every rank. It is collective: every rank joins the
// agreement, also one whose detection failed.
func agreedLimits(world collectives.Comm, info node.Info) ([]memlimit.Limit, error) {
	limits, err := memlimit.Detect("/", memlimit.AddressSpace)
	agreed, aerr := plan.AgreeLimits(world, info.RanksPerNode, limits)
	if err != nil {
		return nil, err
	}
	return agreed, aerr
}
