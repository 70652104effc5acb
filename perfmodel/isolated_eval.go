package perfmodel

import (
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
)

// An isolated job trains every worker on a 1×1×1 grid of its own, but it
// evaluates distributed: all the workers form one 3D grid (d = 1) and run
// the full-graph forward pass there, as a full-graph job on that grid
// would, so no rank holds the whole graph's activations. The functions
// below are the one rule of that grid, its traffic and its memory; package
// jobs builds the evaluation model on IsolatedEvalShape.

// fullGraph is j as a full-graph job: the evaluation's job.
func (j Job) fullGraph() Job {
	f := j
	f.Mode, f.BatchSize, f.StepsPerEpoch = gcn.FullGraph, 0, 0
	return f
}

// IsolatedEvalShape is the 3D grid over workers ranks on which an
// isolated job evaluates: Isolated.EvalShape when the job sets one of
// workers ranks (a prediction for another rank count ignores it), else,
// among Enumerate's grids, the one where the evaluation model takes the
// least memory on a rank (isolatedEvalMemory), then the fewest bytes
// handed to rank 0's collectives, then the first in Enumerate's order.
// Memory first, because holding less than the whole graph's activations
// is why the evaluation is distributed; the compute of a forward pass
// splits evenly over every grid of the same rank count. The rule needs no
// machine profile: every rank, the memory check and the predictions find
// the same grid from the job alone.
func (j Job) IsolatedEvalShape(workers int) grid.Shape {
	if s := j.Isolated.EvalShape; s.Ranks() == workers {
		return s
	}
	shapes, err := Enumerate(workers, 1)
	if err != nil || len(shapes) == 0 {
		return grid.Shape{D: 1, X: 1, Y: 1, Z: 1}
	}
	f := j.fullGraph()
	var best grid.Shape
	var bestMem, bestBytes int64 = -1, -1
	for _, s := range shapes {
		mem := j.isolatedEvalMemory(s).Total()
		var b int64
		for _, c := range EvalTrace(f, s, Coords{}, Local{}).Comm {
			b += c.Bytes()
		}
		if bestMem < 0 || mem < bestMem || (mem == bestMem && b < bestBytes) {
			best, bestMem, bestBytes = s, mem, b
		}
	}
	return best
}

// IsolatedEvalBytes is what one evaluation hands to collectives, summed
// over every rank of the evaluation grid (the metrics' eval_bytes of an
// evaluated epoch); 0 on one worker, which evaluates alone.
func (j Job) IsolatedEvalBytes(workers int) int64 {
	if workers <= 1 {
		return 0
	}
	s, f := j.IsolatedEvalShape(workers), j.fullGraph()
	var b int64
	for r := range s.Ranks() {
		for _, c := range EvalTrace(f, s, CoordsOf(s, r), Local{}).Comm {
			b += c.Bytes()
		}
	}
	return b
}

// isolatedEvalMemory is what the evaluation model adds to rank 0 of the
// evaluation grid s: its shards of the adjacency (gcn.NewEvalShards: no
// transposes) and features, its parameter blocks and optimizer moments
// (allocated, never stepped), the arena of one evaluation
// (gcn.Config.ArenaEval: it never trains) and its largest collective's
// scratch. The whole graph it is cut from is counted once, by the
// worker's own shards.
func (j Job) isolatedEvalMemory(s grid.Shape) Memory {
	f := j.fullGraph()
	f.ShardedLoad = true
	mem := EstimateMemory(f, s, Coords{})
	full := newTracer(f, s, Coords{}, Local{}, false)
	keys, _ := f.shardKeys()
	mem.Adjacency = adjacencyBytes(s, full, keys, nil)
	run := j.runOptions()
	mem.Activations = f.gcnConfig().ArenaEval(blockShape{full}, run).Bytes()
	if j.Precision == device.BF16 {
		mem.Staging, mem.stagingKnown = f.gcnConfig().StagingEval(blockShape{full}, run).Bytes(), true
	}
	mem.Attention = 0
	if f.isGAT() {
		mem.Attention = f.gatEdgeBytes(full, false) // α only
	}
	return mem
}
