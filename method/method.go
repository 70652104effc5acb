package method

import (
	"fmt"

	"scalegnn/gcn"
)

// Method is one of the ways scalegnn trains.
type Method int

// The methods. The zero value is no method.
const (
	// Plexus3D is full-graph training on a 3D grid (train.mode =
	// "fullgraph").
	Plexus3D Method = iota + 1
	// ScaleGNN4D is uniform mini-batch training on a 4D grid: grid.d
	// replicas of a 3D grid (train.mode = "minibatch").
	ScaleGNN4D
	// Neighbor is neighbor-sampling training with every rank a
	// data-parallel worker (FastSample; train.mode = "neighbor").
	Neighbor
	// Isolated trains every worker on its own partition (Grappa;
	// train.mode = "isolated").
	Isolated
	// CAGNET15D is full-graph 1.5D training (train.algorithm = "1.5d").
	CAGNET15D
	// CAGNETBatch is mini-batch 1.5D training with grid.d replicas
	// (train.mode = "minibatch", train.algorithm = "1.5d").
	CAGNETBatch
)

// All lists every method, in the order above.
var All = []Method{Plexus3D, ScaleGNN4D, Neighbor, Isolated, CAGNET15D, CAGNETBatch}

// Algorithm is how a method's step is parallelised, as the job file's
// train.algorithm ("3d", "1.5d"), the performance model's rows and
// summary.json's "algorithm" name it.
type Algorithm string

// Algorithms lists every algorithm, in the order below.
var Algorithms = []Algorithm{Plexus, CAGNET, NeighborSampling, IsolatedPartitions}

// The algorithms.
const (
	// Plexus is the 3D (4D with replicas) parallel products.
	Plexus Algorithm = "3d"
	// CAGNET is the 1.5D algorithm.
	CAGNET Algorithm = "1.5d"
	// NeighborSampling is neighbor-mode training's own.
	NeighborSampling Algorithm = "neighbor"
	// IsolatedPartitions is isolated-mode training's own.
	IsolatedPartitions Algorithm = "isolated"
)

// Of is the method a job file's train.mode and train.algorithm name
// ("" is "3d"). A mode and algorithm that no method trains (1.5D in
// neighbor or isolated mode) name the mode's own method: the job file's
// check refuses them.
func Of(mode gcn.Mode, algorithm Algorithm) Method {
	cagnet := algorithm == CAGNET
	switch mode {
	case gcn.FullGraph:
		if cagnet {
			return CAGNET15D
		}
		return Plexus3D
	case gcn.MiniBatch:
		if cagnet {
			return CAGNETBatch
		}
		return ScaleGNN4D
	case gcn.Neighbor:
		return Neighbor
	case gcn.Isolated:
		return Isolated
	}
	panic(fmt.Sprintf("method: unknown mode %v", mode))
}

// Mode is the method's train.mode.
func (m Method) Mode() gcn.Mode {
	switch m {
	case Plexus3D, CAGNET15D:
		return gcn.FullGraph
	case ScaleGNN4D, CAGNETBatch:
		return gcn.MiniBatch
	case Neighbor:
		return gcn.Neighbor
	case Isolated:
		return gcn.Isolated
	}
	panic(fmt.Sprintf("method: unknown method %d", int(m)))
}

// Algorithm is the method's algorithm.
func (m Method) Algorithm() Algorithm {
	switch m {
	case Plexus3D, ScaleGNN4D:
		return Plexus
	case CAGNET15D, CAGNETBatch:
		return CAGNET
	case Neighbor:
		return NeighborSampling
	case Isolated:
		return IsolatedPartitions
	}
	panic(fmt.Sprintf("method: unknown method %d", int(m)))
}

// String names the method as the docs do: "fullgraph 3d",
// "minibatch 4d", "neighbor", "isolated", "fullgraph 1.5d",
// "minibatch 1.5d".
func (m Method) String() string {
	switch m {
	case Plexus3D:
		return "fullgraph 3d"
	case ScaleGNN4D:
		return "minibatch 4d"
	case Neighbor:
		return "neighbor"
	case Isolated:
		return "isolated"
	case CAGNET15D:
		return "fullgraph 1.5d"
	case CAGNETBatch:
		return "minibatch 1.5d"
	}
	return fmt.Sprintf("method(%d)", int(m))
}

// Batch is the mini-batch-type method that trains with algorithm a: the
// method a job file that sets train.mode to its Mode runs.
func Batch(a Algorithm) Method {
	switch a {
	case Plexus:
		return ScaleGNN4D
	case CAGNET:
		return CAGNETBatch
	case NeighborSampling:
		return Neighbor
	case IsolatedPartitions:
		return Isolated
	}
	panic(fmt.Sprintf("method: unknown algorithm %q", string(a)))
}
