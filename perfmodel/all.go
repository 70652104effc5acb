package perfmodel

import (
	"cmp"
	"fmt"
	"sort"

	"scalegnn/gcn"
	"scalegnn/method"
)

// Choices says which algorithms PredictAll lists for one job.
type Choices struct {
	// Plexus lists every 3D grid (4D with Gd > 1 for mini-batch jobs).
	Plexus bool
	// CAGNET lists every 1.5D arrangement P/c × c (with every Gd for
	// mini-batch jobs).
	CAGNET bool
	// Neighbor lists the neighbor mode (PredictNeighbor; Job.Neighbor).
	Neighbor bool
	// Isolated lists the isolated mode (PredictIsolated; Job.Isolated).
	Isolated bool
}

// Has reports whether c lists algorithm (a Prediction.Algorithm).
func (c Choices) Has(algorithm method.Algorithm) bool {
	switch algorithm {
	case method.Plexus:
		return c.Plexus
	case method.CAGNET:
		return c.CAGNET
	case method.NeighborSampling:
		return c.Neighbor
	case method.IsolatedPartitions:
		return c.Isolated
	}
	return false
}

// PredictAll predicts every configuration of every chosen algorithm for
// the job, ranked together: those that fit in memory first, then by epoch
// time. It is what `perfmodel predict` lists and what grid.auto chooses
// from.
func PredictAll(j Job, m *Machine, o Options, c Choices) ([]Prediction, error) {
	var out []Prediction
	if c.Plexus {
		p, err := Predict(j, m, o)
		if err != nil {
			return nil, err
		}
		out = append(out, p...)
	}
	if c.CAGNET {
		if err := j.Validate(); err != nil {
			return nil, err
		}
		if o.RanksPerNode == 0 {
			o.RanksPerNode = m.RanksPerNode
		}
		switch {
		case j.Mode == gcn.MiniBatch:
			// Gd replicas of every P/c × c (cagnet.MiniBatch).
			if o.D > 0 && o.Ranks%o.D != 0 {
				return nil, fmt.Errorf("perfmodel: Gd = %d does not divide %d ranks: choose a divisor", o.D, o.Ranks)
			}
			out = append(out, PredictCAGNETBatchAll(j, m, o)...)
		case o.D > 1:
			return nil, fmt.Errorf("perfmodel: Gd = %d: full-graph 1.5D has no data-parallel replicas (Gd = 1): use mini-batch mode", o.D)
		default:
			out = append(out, PredictCAGNETAll(j, m, o)...)
		}
	}
	if c.Neighbor {
		p, err := PredictNeighbor(j, m, o.Ranks, cmp.Or(o.RanksPerNode, m.RanksPerNode), o.MemPerRank)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if c.Isolated {
		p, err := PredictIsolated(j, m, o.Ranks, cmp.Or(o.RanksPerNode, m.RanksPerNode), o.MemPerRank)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	sortPredictions(out)
	return out, nil
}

// sortPredictions ranks fitting predictions first, each part by epoch time.
func sortPredictions(p []Prediction) {
	sort.SliceStable(p, func(a, b int) bool {
		if p[a].Fits != p[b].Fits {
			return p[a].Fits
		}
		return p[a].Epoch < p[b].Epoch
	})
}
