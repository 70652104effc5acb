package plan

import (
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/jobfile"
	"scalegnn/method"
	"scalegnn/perfmodel"
)

// rankMemory is the one rule for a rank's predicted memory in the job as
// configured, which the host check (CheckMemory), the GPU check
// (CheckDeviceMemory) and the out-of-memory message (DeviceOutOfMemory)
// share: the model of the job's own algorithm. A 1.5D job holds block rows
// of Â replicated c ways and the whole weights (perfmodel.CAGNETMemory),
// a neighbor job the whole topology and a 1/G block of the features
// (PredictNeighbor), an isolated job its partition (IsolatedMemory); only
// the 3D/4D grids differ by rank (EstimateMemory at the rank's
// coordinates). Before, every job was checked as a 3D grid, so a 1.5D job
// was judged by the wrong model.
func rankMemory(cfg *jobfile.Config, gs GraphSize, shape grid.Shape, rank int) perfmodel.Memory {
	j := PerfJob(cfg, gs)
	return j.StagingBound(algorithmMemory(cfg, j, shape, rank))
}

// algorithmMemory is rankMemory before the mixed-precision staging, which
// only the 3D/4D model predicts exactly (perfmodel.StagingBound).
func algorithmMemory(cfg *jobfile.Config, j perfmodel.Job, shape grid.Shape, rank int) perfmodel.Memory {
	switch {
	case cfg.Train.Algorithm == method.CAGNET && cfg.Train.Mode == gcn.MiniBatch:
		// The full block row and the batches cut from it (cagnet.MiniBatch).
		return perfmodel.CAGNETBatchMemory(j, shape.X*shape.Y*shape.Z, max(cfg.Grid.Replication, 1))
	case cfg.Train.Algorithm == method.CAGNET:
		p := shape.X * shape.Y * shape.Z
		return perfmodel.CAGNETMemory(j, p, max(cfg.Grid.Replication, 1))
	case cfg.Train.Mode == gcn.Neighbor:
		if pr, err := perfmodel.PredictNeighbor(j, perfmodel.DefaultMachine(), shape.Ranks(), 0, 0); err == nil {
			return pr.Memory
		} // else Setup reports the job's error itself; fall through
	case cfg.Train.Mode == gcn.Isolated:
		return j.IsolatedMemory(shape.Ranks())
	}
	return perfmodel.EstimateMemory(j, shape, perfmodel.CoordsOf(shape, rank))
}

// RankMemory is the predicted memory of rank in the job as configured
// (rankMemory), for tests and tools that compare it with a run.
func RankMemory(cfg *jobfile.Config, rank int) (perfmodel.Memory, error) {
	gs, err := EstimateGraphSize(cfg.Dataset)
	if err != nil {
		return perfmodel.Memory{}, err
	}
	shape := grid.Shape{D: cfg.Grid.D, X: cfg.Grid.X, Y: cfg.Grid.Y, Z: cfg.Grid.Z}
	return rankMemory(cfg, gs, shape, rank), nil
}
