package plan

import (
	"fmt"
	"strings"

	"go.uber.org/zap"

	"scalegnn/internal/memlimit"
	"scalegnn/jobfile"
	"scalegnn/method"
	"scalegnn/perfmodel"
)

// ResolveAutoGrid chooses the grid of a job with grid.auto = true for a
// launch of ranks ranks, and its algorithm among those PerfChoices lists
// (3D or 1.5D for a full-graph job without train.algorithm), ranksPerNode of them per node (grid.ranks_per_node
// overrides it): it predicts every grid with the machine profile of
// grid.machine (built-in defaults when empty), takes the fastest one that
// fits in what a rank may use (MemoryLimit: grid.mem_per_rank and limits,
// the same limit as the memory check), writes it into cfg.Grid (turning
// Auto off, so that the effective job file records the grid that ran) and
// logs the choice. Every rank calls it with the same inputs and gets the
// same answer: the prediction is deterministic arithmetic on the job file,
// the profile and the graph's size, and limits must be the same on every
// rank (AgreeLimits).
func ResolveAutoGrid(cfg *jobfile.Config, ranks, ranksPerNode int, limits []memlimit.Limit, log *zap.Logger) error {
	g := cfg.Grid
	if !g.Auto {
		return nil
	}
	m := perfmodel.DefaultMachine()
	if g.Machine != "" {
		var err error
		if m, err = perfmodel.LoadMachine(g.Machine); err != nil {
			return fmt.Errorf("%s: grid.machine: %w", cfg.Label(), err)
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
	applyChoice(cfg, best, ranks)
	runnersUp := make([]string, 0, 3)
	for _, p := range preds[1:min(len(preds), 4)] {
		runnersUp = append(runnersUp, fmt.Sprintf("%s %.3gs", p.Grid, p.Epoch))
	}
	log.Info("grid chosen by the performance model", zap.String("algorithm", string(best.Algorithm)), zap.String("grid", best.Grid),
		zap.String("why", choiceReason(preds, best)), zap.Int("ranks", ranks),
		zap.Int("ranks_per_node", ranksPerNode), zap.String("machine", m.Name),
		zap.Float64("predicted_epoch_s", best.Epoch), zap.String("predicted_memory_per_rank", perfmodel.FormatBytes(best.MemTotal)),
		zap.String("memory_limit", from),
		zap.Strings("next_best", runnersUp), zap.Int("grids", len(preds)))
	return nil
}

// applyChoice writes the chosen configuration into cfg and turns grid.auto
// off, so that the effective job file records what ran: a 3D grid as
// grid.x, y, z, d; a 1.5D arrangement as train.algorithm = "1.5d", grid.d
// (the replicas of a mini-batch job; 1 otherwise), grid.x = P per replica
// (y = z = 1) and grid.replication = c.
func applyChoice(cfg *jobfile.Config, best perfmodel.Prediction, ranks int) {
	g := &cfg.Grid
	g.Auto = false
	if best.Algorithm == method.CAGNET {
		cfg.Train.Algorithm = method.CAGNET
		d := max(best.Shape.D, 1) // CAGNETBatchShape: d replicas of X × Y = P/c × c
		g.X, g.Y, g.Z, g.D, g.Replication = ranks/d, 1, 1, d, best.Shape.Y
		return
	}
	g.X, g.Y, g.Z, g.D = best.Shape.X, best.Shape.Y, best.Shape.Z, best.Shape.D
}

// choiceReason says why best won: fastest that fits, and by how much it
// beats the best configuration of each other algorithm considered (or that
// it was the only algorithm considered).
func choiceReason(preds []perfmodel.Prediction, best perfmodel.Prediction) string {
	why := fmt.Sprintf("fastest predicted %s configuration that fits", best.Algorithm)
	seen := map[method.Algorithm]bool{best.Algorithm: true}
	var others []string
	for _, p := range preds {
		if seen[p.Algorithm] || !p.Fits {
			continue
		}
		seen[p.Algorithm] = true
		others = append(others, fmt.Sprintf("%s's best, %s, predicts %.3gs (%.2fx)", p.Algorithm, p.Grid, p.Epoch, p.Epoch/best.Epoch))
	}
	if len(others) == 0 {
		return why + "; the only algorithm considered (train.algorithm, the mode or the model fix it)"
	}
	return why + "; " + strings.Join(others, "; ")
}
