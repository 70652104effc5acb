package launch

import (
	"fmt"
	"io"

	"scalegnn/collectives"
	"scalegnn/internal/watchdog"
	"scalegnn/jobfile"
)

// StartWatchdog starts this rank's watchdog (runtime.stall_timeout) in
// stage "loading" and returns it with the world to train with, which
// tells it the collective the rank waits in. A stall prints one line,
// passes it to stalled (nil: nothing; the job records it in summary.json,
// jobs.Job.Stalled) and aborts the job with ExitStalled. With
// stall_timeout = "off" it returns a nil watchdog, which ignores reports,
// and world itself.
func StartWatchdog(cfg *jobfile.Config, world collectives.Comm, stderr io.Writer, stalled func(msg string)) (*watchdog.Watchdog, collectives.Comm) {
	p, on := cfg.Runtime.StallPolicy()
	if !on {
		return nil, world
	}
	w := watchdog.New(world.Rank(), p, func(msg string) {
		fmt.Fprintf(stderr, "scalegnn: %s\n", msg)
		if stalled != nil {
			stalled(msg)
		}
		world.Abort(int(ExitStalled))
	})
	w.Start()
	return w, w.Wrap(world, "world")
}
