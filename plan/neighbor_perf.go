package plan

import (
	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/perfmodel"
	"scalegnn/prepared"
)

// neighborPerfJob describes the job's neighbor-mode alternative to the
// performance model (perfmodel.NeighborJob), for every mode but
// full-graph: a neighbor job's own
// train.fanouts, batch_size and prefetch; for a job of another mode the
// defaults (fanouts [25, 10] for two layers, [15, 10, 5] for three, 10
// per layer otherwise; perfmodel.DefaultSeeds seeds per rank; prefetch
// on). The training set's size comes from the dataset's split; the
// degree histogram from the R-MAT generator's parameters
// (perfmodel.RMATDegrees) or, for the built-in and Planetoid graphs, the
// loaded graph; other sources leave it to perfmodel's Poisson default.
func neighborPerfJob(cfg *jobfile.Config, gs GraphSize) perfmodel.NeighborJob {
	t, d := cfg.Train, cfg.Dataset
	if t.Mode == gcn.FullGraph {
		return perfmodel.NeighborJob{} // full-graph jobs list 3D and 1.5D only
	}
	nb := perfmodel.NeighborJob{Fanouts: t.Fanouts, Prefetch: true}
	if t.Mode == gcn.Neighbor {
		nb.Seeds, nb.Prefetch = t.BatchSize, t.Prefetch
	} else {
		switch L := cfg.Model.Layers; L {
		case 2:
			nb.Fanouts = []int{25, 10}
		case 3:
			nb.Fanouts = []int{15, 10, 5}
		default:
			nb.Fanouts = make([]int, L)
			for l := range nb.Fanouts {
				nb.Fanouts[l] = 10
			}
		}
	}
	switch d.Source {
	case jobfile.SourcePrepared:
		if m, err := prepared.ReadMeta(d.Path); err == nil {
			nb.TrainVertices = m.Train
		}
	case jobfile.SourceRMAT:
		r := d.RMAT
		nb.TrainVertices = int(r.TrainFrac * float64(gs.N))
		nb.Degrees = perfmodel.RMATDegrees(r.Scale, r.EdgeFactor, r.A, r.B, r.C, float64(gs.NNZ)-float64(gs.N))
	case jobfile.SourceSBM:
		nb.TrainVertices = int(d.SBM.TrainFrac * float64(gs.N))
	default:
		if g, err := jobfile.LoadGraph(d); err == nil {
			for _, tr := range g.Train {
				if tr {
					nb.TrainVertices++
				}
			}
			nb.Degrees = perfmodel.DegreeHistogram(g.Adj.RowPtr, g.Adj.ColIdx)
		}
	}
	return nb
}
