package cagnet

import (
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/permute"
)

// TestMatchesReference holds 1.5D training on in-process ranks to gcn's
// serial float64 reference (CheckCase) for every (P, c) of issue 17,
// including the generalised (6,3) and (8,4) where c² > P: every case of
// Cases(P) (GCN and SAGE, none and single permutation, dropout, bfloat16
// communication).
func TestMatchesReference(t *testing.T) {
	for _, pc := range [][2]int{{1, 1}, {4, 1}, {4, 2}, {8, 2}, {6, 3}, {8, 4}, {3, 3}} {
		p, c := pc[0], pc[1]
		var cases []Case
		for _, k := range Cases(p) {
			if k.C == c {
				cases = append(cases, k)
			}
		}
		if len(cases) == 0 {
			t.Fatalf("P=%d: no case with c=%d", p, c)
		}
		errs := collectives.RunLocal(p, func(w collectives.Comm) error {
			for _, k := range cases {
				if err := CheckCase(w, device.Host(1), k); err != nil {
					return err
				}
			}
			return nil
		})
		for _, err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	}
}

// TestConformanceEveryReplication: the selftest suite passes on 8 ranks.
func TestConformanceEveryReplication(t *testing.T) {
	errs := collectives.RunLocal(8, func(w collectives.Comm) error {
		if errs := Conformance(w, device.Host(1)); len(errs) > 0 {
			return errs[0]
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestLayoutRejectsNonDividingReplication(t *testing.T) {
	if _, err := NewLayout(6, 4, 0); err == nil {
		t.Fatal("c = 4 with P = 6 accepted; want an error")
	}
}

// TestStagesCoverEveryBlockOnce: the replicas of a process row multiply
// each block column exactly once, and with c² | P each takes P/c².
func TestStagesCoverEveryBlockOnce(t *testing.T) {
	for _, pc := range [][2]int{{1, 1}, {4, 1}, {4, 2}, {8, 2}, {6, 3}, {8, 4}, {16, 4}} {
		p, c := pc[0], pc[1]
		seen := make([]int, p/c)
		for j := 0; j < c; j++ {
			l, _ := NewLayout(p, c, j)
			k0, k1 := l.Stages()
			if p%(c*c) == 0 && k1-k0 != p/(c*c) {
				t.Errorf("P=%d c=%d replica %d: %d stages, want %d", p, c, j, k1-k0, p/(c*c))
			}
			for k := k0; k < k1; k++ {
				seen[k]++
			}
		}
		for k, s := range seen {
			if s != 1 {
				t.Errorf("P=%d c=%d: block column %d multiplied %d times", p, c, k, s)
			}
		}
	}
}

func TestRejectsUnsupported(t *testing.T) {
	cfg := gcn.Config{Features: 3, Hidden: 4, Classes: 2, Layers: 2}
	g := gcn.RandomGraph(1, 10, 3, 2, 3)
	for name, tc := range map[string]struct {
		o   Options
		cfg gcn.Config
	}{
		"double": {Options{Replication: 1, Permutation: permute.Double}, cfg},
		"norm":   {Options{Replication: 1}, gcn.Config{Features: 3, Hidden: 4, Classes: 2, Layers: 2, Norm: true}},
		"head":   {Options{Replication: 1}, gcn.Config{Features: 3, Hidden: 4, Classes: 2, Layers: 2, OutputHead: true}},
		"c∤P":    {Options{Replication: 2}, cfg},
	} {
		errs := collectives.RunLocal(3, func(w collectives.Comm) error {
			_, err := New(w, device.Host(1), tc.o, tc.cfg, gcn.DefaultOptimizer(), g)
			return err
		})
		if errs[0] == nil {
			t.Errorf("%s: accepted; want an error", name)
		}
	}
}
