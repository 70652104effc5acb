package jobfile

import (
	"scalegnn/grid"
)

// GrappaConfig is [grappa]: isolated (gradient-only) training, Grappa
// §3.3–3.6. Every rank is one worker: grid.d = ranks, x = y = z = 1.
type GrappaConfig struct {
	// Partition is "induced" (the two chunks' vertices) or "halo" (plus
	// every vertex within model.layers hops of their training vertices).
	Partition string `toml:"partition"`
	// Correction is "none", "batch" (eq. 12) or "shrinkage" (eq. 18).
	Correction string `toml:"correction"`
	// Partitions is P, the partitions of the sweep, trained grid.d (the
	// ranks, M) at a time in P/M phases per epoch (§3.6, grappa.Phases);
	// 0 means one per rank, every rank training its own partition the
	// whole epoch. A multiple of grid.d.
	Partitions int `toml:"partitions"`
	// Chunks is the number of chunks; 0 means one per partition.
	Chunks int `toml:"chunks"`
	// Split is how vertices are dealt into chunks: "random" (a seeded
	// random split, the default) or "blocks" (chunk c is the vertices at
	// the positions of row block c of C in the job's vertex order: a
	// prepared dataset's block c when it has C blocks).
	Split string `toml:"split"`
	// OutOfCore reads each partition's blocks from the source when it is
	// loaded, instead of holding the whole graph on every worker: the
	// chunks are "blocks", the partitions induced and whole (batch_size
	// = 0), and the vertex orders one (no double permutation).
	OutOfCore bool `toml:"out_of_core"`
	// Evaluation is how the trained model is evaluated: "grid" (the
	// workers form one 3D grid, EvalGrid) or "layerwise" (package infer:
	// layer by layer over the chunks' row blocks read from the source,
	// no rank holding the graph). Empty: "layerwise" with OutOfCore, else
	// "grid".
	Evaluation string `toml:"evaluation"`
	// EvalDir, with layer-wise evaluation, keeps each layer's output in
	// files there between layers instead of memory.
	EvalDir string `toml:"eval_dir"`
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
func (g GrappaConfig) EvalShape() grid.Shape {
	if len(g.EvalGrid) != 3 {
		return grid.Shape{}
	}
	return grid.Shape{D: 1, X: g.EvalGrid[0], Y: g.EvalGrid[1], Z: g.EvalGrid[2]}
}

// Layerwise reports whether the evaluation is layer by layer
// (Evaluation, whose default follows OutOfCore).
func (g GrappaConfig) Layerwise() bool {
	return g.Evaluation == "layerwise" || g.Evaluation == "" && g.OutOfCore
}

// SplitBlocks reports whether the chunks are row blocks of the vertex
// order (Split = "blocks", which OutOfCore implies).
func (g GrappaConfig) SplitBlocks() bool { return g.Split == "blocks" || g.OutOfCore }

// PartitionCount is P for d ranks: Partitions, or d when it is unset.
func (g GrappaConfig) PartitionCount(d int) int {
	if g.Partitions > 0 {
		return g.Partitions
	}
	return d
}

// ChunkCount is the chunks for d ranks: Chunks, or one per partition
// when it is unset.
func (g GrappaConfig) ChunkCount(d int) int {
	if g.Chunks > 0 {
		return g.Chunks
	}
	return g.PartitionCount(d)
}
