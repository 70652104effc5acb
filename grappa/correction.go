package grappa

import "fmt"

// Correction selects the batch-level factor that scales a worker's
// gradient before the all-reduce (§3.4).
type Correction int

const (
	// None leaves the gradient as computed (factor 1).
	None Correction = iota
	// Batch is c_uniform, eq. 12: the mean over the batch of
	// d_local/d_global, the minimum-distance scalar of Theorem 3.2 for
	// uniform neighbor weights.
	Batch
	// Shrinkage is c_resampling, eq. 18: one over the batch's total
	// expected resampling count, Σ (d_global/d_local − 1)·|S_local|.
	Shrinkage
)

// ParseCorrection maps grappa.correction's value to a Correction.
func ParseCorrection(s string) (Correction, error) {
	switch s {
	case "none", "":
		return None, nil
	case "batch":
		return Batch, nil
	case "shrinkage":
		return Shrinkage, nil
	}
	return 0, fmt.Errorf("grappa: correction %q; set grappa.correction to \"none\", \"batch\" or \"shrinkage\"", s)
}

// Factor is the correction factor of a batch whose vertices have local and
// global degrees local[i] ≤ global[i] (self-loop included, so ≥ 1). Every
// neighbor is aggregated (GCN and full-neighborhood SAGE), so the sampled
// local neighborhood |S_local| is d_local.
func (c Correction) Factor(local, global []int) float64 {
	if len(local) != len(global) {
		panic(fmt.Sprintf("grappa: Factor with %d local and %d global degrees", len(local), len(global)))
	}
	for i := range local {
		if local[i] < 1 || local[i] > global[i] {
			panic(fmt.Sprintf("grappa: batch vertex %d has local degree %d, global %d; want 1 ≤ local ≤ global", i, local[i], global[i]))
		}
	}
	switch c {
	case Batch:
		return Coverage(local, global)
	case Shrinkage:
		// Σ (d_g/d_l − 1)·d_l = Σ (d_g − d_l): the batch's missing edges,
		// an integer. With none missing eq. 18 divides by zero; the batch
		// is fully covered and needs no correction, so the factor is 1,
		// which is also its value at one missing edge (no jump).
		missing := 0
		for i := range local {
			missing += global[i] - local[i]
		}
		if missing == 0 {
			return 1
		}
		return 1 / float64(missing)
	}
	return 1
}

// Coverage is ĉ, the batch's mean of d_local/d_global (eq. 12); the
// controller's coverage deficit is 1 − ĉ. An empty batch is fully covered.
func Coverage(local, global []int) float64 {
	if len(local) == 0 {
		return 1
	}
	s := 0.0
	for i := range local {
		s += float64(local[i]) / float64(global[i])
	}
	return s / float64(len(local))
}
