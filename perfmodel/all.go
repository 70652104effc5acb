package perfmodel

import (
	"cmp"
	"fmt"
	"sort"

	"scalegnn/gcn"
	"scalegnn/method"
)

// Choices is the set of algorithms PredictAll lists for one job: Plexus
// every 3D grid (4D with Gd > 1 for mini-batch jobs), CAGNET every 1.5D
// arrangement P/c × c (with every Gd for mini-batch jobs), and the
// neighbor and isolated modes (PredictNeighbor, PredictIsolated).
type Choices map[method.Algorithm]bool

// Has reports whether c lists algorithm (a Prediction.Algorithm).
func (c Choices) Has(algorithm method.Algorithm) bool { return c[algorithm] }

// PredictAll predicts every configuration of every chosen algorithm for
// the job, ranked together: those that fit in memory first, then by epoch
// time. It is what `perfmodel predict` lists and what grid.auto chooses
// from.
func PredictAll(j Job, m *Machine, o Options, c Choices) ([]Prediction, error) {
	if err := j.Validate(); err != nil {
		return nil, err
	}
	if err := j.CheckRanks(o.Ranks); err != nil {
		return nil, err
	}
	var out []Prediction
	if c[method.Plexus] {
		p, err := Predict(j, m, o)
		if err != nil {
			return nil, err
		}
		out = append(out, p...)
	}
	if c[method.CAGNET] {
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
	if c[method.NeighborSampling] {
		p, err := PredictNeighbor(j, m, o.Ranks, cmp.Or(o.RanksPerNode, m.RanksPerNode), o.MemPerRank)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if c[method.IsolatedPartitions] {
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

// Equal reports whether c and d list the same algorithms (an algorithm
// mapped to false is not listed).
func (c Choices) Equal(d Choices) bool {
	for _, a := range method.Algorithms {
		if c[a] != d[a] {
			return false
		}
	}
	return true
}
