package jobs

import (
	"fmt"

	"scalegnn/grappa"
	"scalegnn/grid"
)

// GrappaConfig is [grappa]: isolated (gradient-only) training, Grappa
// §3.3–3.5. Every rank is one worker: grid.d = ranks, x = y = z = 1.
type GrappaConfig struct {
	// Partition is "induced" (the two chunks' vertices) or "halo" (plus
	// every vertex within model.layers hops of their training vertices).
	Partition string `toml:"partition"`
	// Correction is "none", "batch" (eq. 12) or "shrinkage" (eq. 18).
	Correction string `toml:"correction"`
	// Chunks is the number of chunks; 0 means one per worker.
	Chunks int `toml:"chunks"`
	// EpochsPerSuperEpoch is how many epochs a partition trains before
	// the sweep moves on (default 1).
	EpochsPerSuperEpoch int `toml:"epochs_per_super_epoch"`
	// Deficit and DeficitEpochs are the coverage-deficit early switch: a
	// super-epoch ends early once every worker's 1 − ĉ has exceeded
	// Deficit for DeficitEpochs epochs in a row (0 disables it).
	Deficit       float64 `toml:"deficit"`
	DeficitEpochs int     `toml:"deficit_epochs"`
	// EvalGrid is [x, y, z], the 3D grid of the distributed evaluation:
	// all the workers together run the full-graph forward pass as a
	// full-graph job on that grid would. Empty takes the grid where the
	// evaluation takes the least memory on a rank, then moves the fewest
	// bytes (perfmodel.IsolatedEvalShape).
	EvalGrid []int `toml:"eval_grid"`
}

// evalShape is EvalGrid as a grid shape (the zero Shape when unset).
func (g GrappaConfig) evalShape() grid.Shape {
	if len(g.EvalGrid) != 3 {
		return grid.Shape{}
	}
	return grid.Shape{D: 1, X: g.EvalGrid[0], Y: g.EvalGrid[1], Z: g.EvalGrid[2]}
}

// checkIsolated is the one place isolated-mode settings are checked.
func checkIsolated(file string, c *Config) error {
	t, g, gr := c.Train, c.Grid, c.Grappa
	switch {
	case t.BatchRatio != 0:
		return fmt.Errorf(`%s: train.batch_ratio = %g: isolated mode takes train.batch_size, the training vertices of a worker's partition per step (0: all of them); set that instead`, file, t.BatchRatio)
	case t.StepsPerEpoch != 0 && t.BatchSize == 0:
		return fmt.Errorf(`%s: train.steps_per_epoch = %d with train.batch_size = 0: a whole partition is one step per epoch; set train.batch_size or remove steps_per_epoch`, file, t.StepsPerEpoch)
	case g.X*g.Y*g.Z != 1:
		return fmt.Errorf(`%s: grid %dx%dx%d: train.mode = "isolated" makes every rank a worker; set grid.x = y = z = 1 and grid.d = the rank count`, file, g.X, g.Y, g.Z)
	case gr.Chunks != 0 && gr.Chunks < g.D:
		return fmt.Errorf("%s: grappa.chunks = %d: expected 0 (one per worker) or at least grid.d = %d", file, gr.Chunks, g.D)
	case gr.EpochsPerSuperEpoch < 0 || gr.DeficitEpochs < 0 || gr.Deficit < 0:
		return fmt.Errorf("%s: grappa.epochs_per_super_epoch, deficit and deficit_epochs must be ≥ 0", file)
	case len(gr.EvalGrid) != 0 && (len(gr.EvalGrid) != 3 || min(gr.EvalGrid[0], gr.EvalGrid[1], gr.EvalGrid[2]) < 1 ||
		gr.EvalGrid[0]*gr.EvalGrid[1]*gr.EvalGrid[2] != g.D):
		return fmt.Errorf("%s: grappa.eval_grid = %v: expected [x, y, z], positive, with x·y·z = grid.d = %d (every worker evaluates); or remove it to let the model choose", file, gr.EvalGrid, g.D)
	}
	if _, err := grappa.ParseKind(gr.Partition); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	if _, err := grappa.ParseCorrection(gr.Correction); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	return nil
}
