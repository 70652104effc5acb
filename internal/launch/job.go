package launch

import (
	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/grid"
	"scalegnn/internal/node"
	"scalegnn/jobfile"
	"scalegnn/plan"
)

// LoadJob reads the job file at path on this rank, applies the -grid
// override, checks the grid against the world, resolves grid.auto and an
// isolated job's partitions within the memory every rank may use, and
// an isolated job's evaluation grid. It detects the node first, which is collective: every rank calls
// it before anything can fail on one. Its error is for every rank to
// agree on (WithMPI).
func LoadJob(world collectives.Comm, path string, override *grid.Shape, log *zap.Logger) (node.Info, *jobfile.Config, error) {
	info, nerr := node.Detect(world)
	limits, lerr := agreedLimits(world, info)
	cfg, err := jobfile.LoadConfig(path)
	if err == nil && override != nil {
		cfg.Grid.X, cfg.Grid.Y, cfg.Grid.Z = override.X, override.Y, override.Z
		if override.D > 0 {
			cfg.Grid.D = override.D
		}
		cfg.Grid.Auto = false
		err = cfg.Validate()
	}
	if err == nil {
		err = cfg.CheckWorld(world.Size())
	}
	if err == nil {
		err = nerr
	}
	if err == nil && cfg.Grid.Auto {
		if err = lerr; err == nil {
			err = plan.ResolveAutoGrid(cfg, world.Size(), info.RanksPerNode, limits, log)
		}
	}
	if err == nil && lerr == nil {
		// Isolated mode's partitions, when one per rank does not fit.
		err = plan.ResolvePartitions(cfg, info.RanksPerNode, limits, log)
	}
	if err == nil {
		err = plan.ResolveEvalGrid(cfg) // isolated mode's evaluation grid
	}
	return info, cfg, err
}
