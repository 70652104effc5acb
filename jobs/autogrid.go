package jobs

import (
	"fmt"

	"go.uber.org/zap"

	"scalegnn/internal/memlimit"
	"scalegnn/perfmodel"
)

// ResolveAutoGrid chooses the grid of a job with grid.auto = true for a
// launch of ranks ranks, ranksPerNode of them per node (grid.ranks_per_node
// overrides it): it predicts every grid with the machine profile of
// grid.machine (built-in defaults when empty), takes the fastest one that
// fits in what a rank may use (MemoryLimit: grid.mem_per_rank and limits,
// the same limit as the memory check), writes it into cfg.Grid (turning
// Auto off, so that the effective job file records the grid that ran) and
// logs the choice. Every rank calls it with the same inputs and gets the
// same answer: the prediction is deterministic arithmetic on the job file,
// the profile and the graph's size, and limits must be the same on every
// rank (AgreeLimits).
func ResolveAutoGrid(cfg *Config, ranks, ranksPerNode int, limits []memlimit.Limit, log *zap.Logger) error {
	g := cfg.Grid
	if !g.Auto {
		return nil
	}
	m := perfmodel.DefaultMachine()
	if g.Machine != "" {
		var err error
		if m, err = perfmodel.LoadMachine(g.Machine); err != nil {
			return fmt.Errorf("%s: grid.machine: %w", cfg.label(), err)
		}
	}
	if g.RanksPerNode > 0 {
		ranksPerNode = g.RanksPerNode
	}
	mem, from, ok, err := MemoryLimit(cfg, ranksPerNode, limits)
	if err != nil {
		return err
	}
	if !ok {
		mem, from = 0, "none"
	}
	gs, err := EstimateGraphSize(cfg.Dataset)
	if err != nil {
		return err
	}
	preds, best, err := ChooseGrid(cfg, gs, m, ranks, ranksPerNode, mem)
	if err != nil {
		if ok {
			return fmt.Errorf("%w (the limit: %s)", err, from)
		}
		return err
	}
	cfg.Grid.X, cfg.Grid.Y, cfg.Grid.Z, cfg.Grid.D = best.Shape.X, best.Shape.Y, best.Shape.Z, best.Shape.D
	cfg.Grid.Auto = false
	runnersUp := make([]string, 0, 3)
	for _, p := range preds[1:min(len(preds), 4)] {
		runnersUp = append(runnersUp, fmt.Sprintf("%s %.3gs", p.Grid, p.Epoch))
	}
	log.Info("grid chosen by the performance model", zap.String("grid", best.Grid), zap.Int("ranks", ranks),
		zap.Int("ranks_per_node", ranksPerNode), zap.String("machine", m.Name),
		zap.Float64("predicted_epoch_s", best.Epoch), zap.String("predicted_memory_per_rank", perfmodel.FormatBytes(best.MemTotal)),
		zap.String("memory_limit", from),
		zap.Strings("next_best", runnersUp), zap.Int("grids", len(preds)))
	return nil
}
