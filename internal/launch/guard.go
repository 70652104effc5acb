package launch

import (
	"fmt"
	"io"

	"scalegnn/collectives"
	"scalegnn/internal/memlimit"
	"scalegnn/internal/node"
	"scalegnn/internal/watchdog"
	"scalegnn/jobs"
)

// CheckMemory is the memory check before loading (jobs.CheckMemory) with
// this machine's limits; with runtime.mem_check = false it checks only
// the address space of ulimit -v.
func CheckMemory(cfg *jobs.Config, rank int, info node.Info) error {
	limits, err := memlimit.Detect("/", memlimit.AddressSpace)
	if err != nil {
		return err
	}
	return jobs.CheckMemory(cfg, rank, info.RanksPerNode, limits)
}

// agreedLimits returns the memory limits of this machine per rank, the
// smallest over the ranks (jobs.AgreeLimits), in which grid.auto chooses
// the same grid on every rank. It is collective: every rank joins the
// agreement, also one whose detection failed.
func agreedLimits(world collectives.Comm, info node.Info) ([]memlimit.Limit, error) {
	limits, err := memlimit.Detect("/", memlimit.AddressSpace)
	agreed, aerr := jobs.AgreeLimits(world, info.RanksPerNode, limits)
	if err != nil {
		return nil, err
	}
	return agreed, aerr
}

// StartWatchdog starts this rank's watchdog (runtime.stall_timeout) in
// stage "loading" and returns it with the world to train with, which
// tells it the collective the rank waits in. A stall prints one line and
// aborts the job with ExitStalled. With stall_timeout = "off" it returns
// a nil watchdog, which ignores reports, and world itself.
func StartWatchdog(cfg *jobs.Config, world collectives.Comm, stderr io.Writer) (*watchdog.Watchdog, collectives.Comm) {
	p, on := cfg.Runtime.StallPolicy()
	if !on {
		return nil, world
	}
	w := watchdog.New(world.Rank(), p, func(msg string) {
		fmt.Fprintf(stderr, "scalegnn: %s\n", msg)
		world.Abort(int(ExitStalled))
	})
	w.Start()
	return w, w.Wrap(world, "world")
}
