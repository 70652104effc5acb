package gcn

import (
	"errors"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/spmm"
)

// TestPrecisionConformance runs the self-test's suite in mixed precision
// (train.precision = "bf16") on every grid of 4 ranks against the
// reference with the same roundings, to the mixed-precision tolerances.
func TestPrecisionConformance(t *testing.T) {
	suite := DefaultConformance()
	suite.Precision = device.BF16
	checkSuite(t, 4, suite)
}

// TestPrecisionRoundsWhereTheReferenceDoes holds mixed precision to the
// float32 tolerances in full-graph training on every grid of 3 and 4
// ranks (a mini-batch's rescaled adjacency has ties again), on problems without
// rounding ties (see conformancePrecisionGradTol): the GCN and GAT cases
// on the self-test's graph, and the SAGE cases on a 4-regular ring, whose
// mean weights 1/4 are exact. A rounding missing or put elsewhere than
// the reference's fails it: the float32 model against the same
// references does (the negative control).
func TestPrecisionRoundsWhereTheReferenceDoes(t *testing.T) {
	base := DefaultConformance()
	base.Precision, base.exactRoundings, base.BF16 = device.BF16, true, false
	gcnGAT, sage := base, base
	gcnGAT.Cases, sage.Cases = nil, nil
	for _, c := range base.Cases {
		if c.Config.Layer == SAGELayer {
			sage.Cases = append(sage.Cases, c)
		} else {
			gcnGAT.Cases = append(gcnGAT.Cases, c)
		}
	}
	g := *base.Graph
	g.Adj = dataset.NormalizeGCN(ring(g.Adj.Rows, 2))
	sage.Graph = &g
	for _, ranks := range []int{3, 4} {
		gcnGAT.Shapes, sage.Shapes = nil, nil
		for _, sh := range grid.Shapes(ranks, 0) {
			if sh.D == 1 {
				gcnGAT.Shapes, sage.Shapes = append(gcnGAT.Shapes, sh), append(sage.Shapes, sh)
			}
		}
		checkSuite(t, ranks, gcnGAT)
		checkSuite(t, ranks, sage)
	}
	gcnGAT.Shapes, sage.Shapes = []grid.Shape{{D: 1, X: 1, Y: 1, Z: 1}}, []grid.Shape{{D: 1, X: 1, Y: 1, Z: 1}}
	for _, s := range []ConformanceSuite{gcnGAT, sage} {
		s.f32Model = true
		for _, c := range s.Cases {
			one := s
			one.Cases = []ConformanceCase{c}
			fails := false
			for _, err := range collectives.RunLocal(1, func(w collectives.Comm) error {
				return errors.Join(Conformance(w, device.NewNative(1), one)...)
			}) {
				fails = fails || err != nil
			}
			if !fails {
				t.Errorf("%s: the float32 model passes against the mixed-precision reference at the float32 tolerances", c.Name)
			}
		}
	}
}

// checkSuite runs suite on ranks in-process ranks and reports every
// rank's errors.
func checkSuite(t *testing.T, ranks int, suite ConformanceSuite) {
	t.Helper()
	for r, err := range collectives.RunLocal(ranks, func(w collectives.Comm) error {
		return errors.Join(Conformance(w, device.NewNative(1), suite)...)
	}) {
		if err != nil {
			t.Errorf("%d ranks, rank %d: %v", ranks, r, err)
		}
	}
}

// ring is the n-vertex graph joining each vertex to the k nearest on
// either side: 2k-regular.
func ring(n, k int) *spmm.CSR {
	var ri, ci []int32
	for i := range n {
		for d := 1; d <= k; d++ {
			for _, j := range []int{(i + d) % n, (i - d + n) % n} {
				ri, ci = append(ri, int32(i)), append(ci, int32(j))
			}
		}
	}
	return spmm.FromCOO(n, n, ri, ci, nil)
}
