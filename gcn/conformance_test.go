package gcn

import (
	"errors"
	"scalegnn/device"
	"strings"
	"testing"

	"scalegnn/collectives"
	"scalegnn/grid"
)

// TestDefaultConformance runs the self-test's suite in process on every
// grid of 4 ranks (full graph on the six 3D grids, data parallel with
// Gd = 2 and 4), as scalegnn selftest does over MPI.
func TestDefaultConformance(t *testing.T) {
	suite := DefaultConformance()
	for r, err := range collectives.RunLocal(4, func(w collectives.Comm) error {
		return errors.Join(Conformance(w, device.NewNative(1), suite)...)
	}) {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// TestConformanceCatchesDriftingReplicas: one rank's weight block one ulp
// off its replicas' is found by the bitwise agreement check, by the ranks
// that hold the entry, and an intact model passes it.
func TestConformanceCatchesDriftingReplicas(t *testing.T) {
	suite := DefaultConformance()
	c := suite.Cases[1]
	shape := grid.Shape{D: 1, X: 2, Y: 2, Z: 2}
	found := make([]bool, shape.Ranks())
	for r, err := range collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
		g, m, err := suite.build(w, device.NewNative(1), shape, c, Options{})
		if err != nil {
			return err
		}
		var k mismatches
		if err := k.replicas(0, g.World, m); err != nil {
			return err
		}
		if err := k.err(); err != nil {
			return errors.New("intact model: " + err.Error())
		}
		if w.Rank() == 0 {
			p := m.Params[0]
			w := p.Weights()
			w[0] = nextUp(w[0])
			p.Upload(w)
		}
		if err := k.replicas(1, g.World, m); err != nil {
			return err
		}
		found[w.Rank()] = k.err() != nil && strings.Contains(k.err().Error(), "disagree")
		return nil
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	n := 0
	for _, f := range found {
		if f {
			n++
		}
	}
	if !found[0] || n < 2 {
		t.Fatalf("ranks that saw the drift: %v; want rank 0 and its replicas", found)
	}
}

func nextUp(v float32) float32 {
	if v == 0 {
		return 1e-30
	}
	return v * (1 + 1.0/(1<<22))
}

// TestMismatchesReport: the loss check fails outside its tolerance and
// on NaN, and err counts the mismatches after the first.
func TestMismatchesReport(t *testing.T) {
	var k mismatches
	k.loss(0, "", 1.0+5e-6, 1.0, 1e-5)
	if k.err() != nil {
		t.Fatalf("within tolerance: %v", k.err())
	}
	k.loss(1, "", 1.0+2e-5, 1.0, 1e-5)
	nan := 0.0
	k.loss(2, "", nan/nan, 1.0, 1e-5)
	if err := k.err(); err == nil || !strings.Contains(err.Error(), "step 1") || !strings.Contains(err.Error(), "1 more") {
		t.Fatalf("two mismatches reported as %v", err)
	}
}
