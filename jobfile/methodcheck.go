package jobfile

import (
	"fmt"

	"scalegnn/gcn"
	"scalegnn/grappa"
	"scalegnn/method"
	"scalegnn/permute"
)

// The key checks of each training method: Config.Validate runs the one
// the job's method (Config.Method) names, after the keys every method
// shares, through methodChecks.

// Method is the training method the job file names (train.mode with
// train.algorithm).
func (c *Config) Method() method.Method { return method.Of(c.Train.Mode, c.Train.Algorithm) }

// methodChecks is each method's check of the keys it reads; file names
// the job file.
var methodChecks = map[method.Method]func(file string, c *Config) error{
	method.Plexus3D:    checkFullGraph,
	method.ScaleGNN4D:  checkMiniBatch,
	method.Neighbor:    checkNeighbor,
	method.Isolated:    checkIsolated,
	method.CAGNET15D:   checkAlgorithm,
	method.CAGNETBatch: checkAlgorithm,
}

// checkAlgorithm validates train.algorithm and grid.replication.
func checkAlgorithm(file string, c *Config) error {
	t, g := c.Train, c.Grid
	switch {
	case t.Algorithm != method.CAGNET && t.Algorithm != method.Plexus && t.Algorithm != "":
		return fmt.Errorf(`%s: train.algorithm = %q: expected "3d" (the default) or "1.5d"`, file, t.Algorithm)
	case t.Algorithm != method.CAGNET:
		return fmt.Errorf(`%s: grid.replication = %d applies to train.algorithm = "1.5d": set it or remove grid.replication`, file, g.Replication)
	case g.Auto && g.Replication > 1:
		return fmt.Errorf(`%s: grid.auto = true chooses grid.replication too: remove grid.replication = %d or set grid.auto = false`, file, g.Replication)
	case g.Replication < 0 || g.Replication > 1 && (g.X*g.Y*g.Z)%g.Replication != 0:
		return fmt.Errorf(`%s: grid.replication = %d with x·y·z = %d ranks: replication must divide the rank count`, file, g.Replication, g.X*g.Y*g.Z)
	}
	if err := CAGNETScope(c); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// CAGNETScope says why package cagnet cannot train the job, or nil: the
// one rule that both the config check of train.algorithm = "1.5d" and the
// performance model's list of algorithms (PerfChoices) follow.
func CAGNETScope(c *Config) error {
	t, g, m := c.Train, c.Grid, c.Model
	switch {
	case t.Mode != gcn.FullGraph && t.Mode != gcn.MiniBatch:
		return fmt.Errorf(`train.mode = %q: train.algorithm = "1.5d" trains the full graph or uniform mini-batches: set train.mode = "fullgraph" or "minibatch"`, t.Mode)
	case g.D > 1 && t.Mode != gcn.MiniBatch:
		// Data-parallel replicas train one mini-batch each per step; a
		// full-graph step has one batch, the graph, as in 3D.
		return fmt.Errorf(`grid.d = %d: train.algorithm = "1.5d" has data-parallel replicas in mini-batch training only: set train.mode = "minibatch" or grid.d = 1`, g.D)
	case m.InputProjection || m.OutputHead || m.Residual || m.Norm != gcn.NoNorm:
		return fmt.Errorf(`train.algorithm = "1.5d" trains GCN, SAGE and GAT layers without extras: set model.input_projection, output_head and residual false and model.norm = "none"`)
	case c.Permute.Scheme == permute.Double:
		return fmt.Errorf(`permute.scheme = "double" does not apply to train.algorithm = "1.5d" (one vertex order serves every layer): use "single" or "none"`)
	}
	return nil
}

// checkNeighbor validates the keys of train.mode = "neighbor".
func checkNeighbor(file string, c *Config) error {
	t, g, m := c.Train, c.Grid, c.Model
	switch {
	case t.BatchSize < 1:
		return fmt.Errorf(`%s: train.mode = "neighbor" needs train.batch_size, the seeds per rank per step (at least 1)`, file)
	case t.BatchRatio != 0 || t.StepsPerEpoch != 0:
		return fmt.Errorf(`%s: train.batch_ratio and steps_per_epoch apply to train.mode = "minibatch"; neighbor mode takes train.batch_size seeds per rank and ceil(train vertices / (ranks × batch_size)) steps per epoch: remove them`, file)
	case len(t.Fanouts) != m.Layers:
		return fmt.Errorf(`%s: train.fanouts = %v: expected one fanout per layer (model.layers = %d), first layer first, e.g. fanouts = [25, 10]`, file, t.Fanouts, m.Layers)
	case g.Auto || g.X != 1 || g.Y != 1 || g.Z != 1:
		return fmt.Errorf(`%s: train.mode = "neighbor" makes every rank a data-parallel worker: set grid.x = y = z = 1 and grid.d = the number of ranks (grid.auto = false)`, file)
	case m.InputProjection || m.OutputHead || m.Residual || m.Norm != gcn.NoNorm:
		return fmt.Errorf(`%s: train.mode = "neighbor" trains a plain stack of graph layers: set model.input_projection, output_head and residual to false and model.norm = "none"`, file)
	}
	for l, f := range t.Fanouts {
		if f < 1 {
			return fmt.Errorf(`%s: train.fanouts[%d] = %d: expected at least 1 neighbour per vertex (a fanout at least the largest degree keeps every neighbourhood whole)`, file, l, f)
		}
	}
	return nil
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
	case gr.Partitions < 0 || gr.Partitions != 0 && gr.Partitions%g.D != 0:
		return fmt.Errorf("%s: grappa.partitions = %d: expected 0 (one per rank) or a positive multiple of grid.d = %d (the ranks train that many partitions at a time)", file, gr.Partitions, g.D)
	case gr.Chunks != 0 && gr.Chunks < gr.PartitionCount(g.D):
		return fmt.Errorf("%s: grappa.chunks = %d: expected 0 (one per partition) or at least the %d partitions (grappa.partitions, or grid.d)", file, gr.Chunks, gr.PartitionCount(g.D))
	case gr.EpochsPerSuperEpoch < 0 || gr.DeficitEpochs < 0 || gr.Deficit < 0:
		return fmt.Errorf("%s: grappa.epochs_per_super_epoch, deficit and deficit_epochs must be ≥ 0", file)
	case len(gr.EvalGrid) != 0 && (len(gr.EvalGrid) != 3 || min(gr.EvalGrid[0], gr.EvalGrid[1], gr.EvalGrid[2]) < 1 ||
		gr.EvalGrid[0]*gr.EvalGrid[1]*gr.EvalGrid[2] != g.D):
		return fmt.Errorf("%s: grappa.eval_grid = %v: expected [x, y, z], positive, with x·y·z = grid.d = %d (every worker evaluates); or remove it to let the model choose", file, gr.EvalGrid, g.D)
	}
	if _, err := grappa.ParseKind(gr.Partition); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	if err := checkOutOfCore(file, c); err != nil {
		return err
	}
	if _, err := grappa.ParseCorrection(gr.Correction); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	return nil
}

// checkOutOfCore checks grappa.split and what grappa.out_of_core needs:
// a partition is read as the blocks of its two chunks, so the chunks are
// blocks of one vertex order and the partition their induced subgraph,
// trained whole.
func checkOutOfCore(file string, c *Config) error {
	gr, t := c.Grappa, c.Train
	switch {
	case gr.Split != "" && gr.Split != "random" && gr.Split != "blocks":
		return fmt.Errorf(`%s: grappa.split = %q: expected "random" (a seeded random split) or "blocks" (row blocks of the vertex order)`, file, gr.Split)
	case gr.Evaluation != "" && gr.Evaluation != "grid" && gr.Evaluation != "layerwise":
		return fmt.Errorf(`%s: grappa.evaluation = %q: expected "grid" (the workers' 3D grid) or "layerwise" (layer by layer over row blocks)`, file, gr.Evaluation)
	case gr.Layerwise() && len(gr.EvalGrid) != 0:
		return fmt.Errorf(`%s: grappa.eval_grid applies to grappa.evaluation = "grid": remove it, or set evaluation = "grid"`, file)
	case gr.Layerwise() && c.Permute.Scheme == permute.Double:
		return fmt.Errorf(`%s: permute.scheme = "double": layer-wise evaluation reads a block's rows and columns in one vertex order; use "single", or set grappa.evaluation = "grid"`, file)
	case gr.EvalDir != "" && !gr.Layerwise():
		return fmt.Errorf(`%s: grappa.eval_dir applies to layer-wise evaluation: set grappa.evaluation = "layerwise" or remove it`, file)
	case !gr.OutOfCore:
		return nil
	case gr.Split == "random":
		return fmt.Errorf(`%s: grappa.out_of_core reads chunks as row blocks: set grappa.split = "blocks" or remove it`, file)
	case gr.Partition == "halo":
		return fmt.Errorf(`%s: grappa.out_of_core reads a partition as its two chunks' blocks; a halo reaches other chunks: set grappa.partition = "induced"`, file)
	case t.BatchSize != 0:
		return fmt.Errorf(`%s: train.batch_size = %d: grappa.out_of_core trains each partition whole; set train.batch_size = 0`, file, t.BatchSize)
	case gr.DeficitEpochs != 0:
		return fmt.Errorf(`%s: grappa.deficit_epochs = %d: the coverage-deficit switch needs every partition's coverage, which grappa.out_of_core does not hold; set it to 0`, file, gr.DeficitEpochs)
	case c.Permute.Scheme == permute.Double:
		return fmt.Errorf(`%s: permute.scheme = "double": grappa.out_of_core reads a chunk's rows and features in one vertex order; use "single"`, file)
	}
	return nil
}

// checkFullGraph checks the keys of full-graph 3D training: it takes no
// batches.
func checkFullGraph(file string, c *Config) error {
	t := c.Train
	switch {
	case len(t.Fanouts) != 0:
		return errFanouts(file)
	case t.BatchSize != 0 || t.BatchRatio != 0 || t.StepsPerEpoch != 0:
		return fmt.Errorf(`%s: train.batch_size, batch_ratio and steps_per_epoch apply to mini-batch training: set train.mode = "minibatch" or remove them`, file)
	}
	return nil
}

// checkMiniBatch checks the keys of 4D mini-batch training beyond the
// batch size, which every mini-batch method shares (Validate).
func checkMiniBatch(file string, c *Config) error {
	if len(c.Train.Fanouts) != 0 {
		return errFanouts(file)
	}
	return nil
}

func errFanouts(file string) error {
	return fmt.Errorf(`%s: train.fanouts applies to neighbor sampling: set train.mode = "neighbor" or remove it`, file)
}
