package plan

import (
	"scalegnn/gcn"
	"scalegnn/jobfile"
)

// ResolveEvalGrid fills grappa.eval_grid of an isolated job of more than
// one worker that leaves it unset with the performance model's rule
// (perfmodel.IsolatedEvalShape on the graph's estimated size), so the
// effective job file records the grid the evaluation ran on. The
// launcher calls it with grid.auto, where errors are agreed on; Setup
// calls it too, for callers that did not.
func ResolveEvalGrid(cfg *jobfile.Config) error {
	gr := &cfg.Grappa
	if cfg.Train.Mode != gcn.Isolated || cfg.Grid.D <= 1 || len(gr.EvalGrid) != 0 || gr.Layerwise() {
		return nil
	}
	gs, err := EstimateGraphSize(cfg.Dataset)
	if err != nil {
		return err
	}
	s := PerfJob(cfg, gs).IsolatedEvalShape(cfg.Grid.D)
	gr.EvalGrid = []int{s.X, s.Y, s.Z}
	return nil
}
