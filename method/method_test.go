package method

import (
	"testing"

	"scalegnn/gcn"
)

// TestOfRoundTrip: every method is named by exactly one (mode,
// algorithm) pair of the job file, and gives them back.
func TestOfRoundTrip(t *testing.T) {
	seen := map[Method]bool{}
	for _, m := range All {
		a := m.Algorithm()
		if a == NeighborSampling || a == IsolatedPartitions {
			a = "" // the job file names these by train.mode alone
		}
		if got := Of(m.Mode(), a); got != m {
			t.Errorf("Of(%v, %q) = %v, want %v", m.Mode(), a, got, m)
		}
		if seen[m] {
			t.Errorf("%v listed twice", m)
		}
		seen[m] = true
	}
	for _, c := range []struct {
		mode gcn.Mode
		alg  Algorithm
		want Method
	}{
		{gcn.FullGraph, "", Plexus3D}, {gcn.FullGraph, Plexus, Plexus3D}, {gcn.FullGraph, CAGNET, CAGNET15D},
		{gcn.MiniBatch, "", ScaleGNN4D}, {gcn.MiniBatch, CAGNET, CAGNETBatch},
		{gcn.Neighbor, "", Neighbor}, {gcn.Isolated, Plexus, Isolated},
	} {
		if got := Of(c.mode, c.alg); got != c.want {
			t.Errorf("Of(%v, %q) = %v, want %v", c.mode, c.alg, got, c.want)
		}
	}
}
