package cagnet

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/permute"
)

// TestMatchesReference holds 1.5D training on in-process ranks to gcn's
// serial float64 reference: losses and gradients of 3 steps and the
// weights after them, for every (P, c) of issue 17 including the
// generalised (6,3) and (8,4) where c² > P.
func TestMatchesReference(t *testing.T) {
	const tol = 2e-5 // float32 storage and summation order against float64
	cfg := gcn.Config{Features: 7, Hidden: 5, Classes: 3, Layers: 3, Seed: 11}
	opt := gcn.DefaultOptimizer()
	g := gcn.RandomGraph(5, 41, cfg.Features, cfg.Classes, 4) // 41: prime, no block count divides it
	for _, tc := range []struct {
		p, c   int
		scheme permute.Scheme
	}{
		{1, 1, permute.None}, {4, 1, permute.None}, {4, 2, permute.None}, {8, 2, permute.None},
		{6, 3, permute.None}, {8, 4, permute.None}, {3, 3, permute.None},
		{1, 1, permute.Single}, {4, 1, permute.Single}, {4, 2, permute.Single}, {8, 2, permute.Single},
		{6, 3, permute.Single}, {8, 4, permute.Single},
	} {
		p, c := tc.p, tc.c
		t.Run(fmt.Sprintf("P%d_c%d_%v", p, c, tc.scheme), func(t *testing.T) {
			ref := gcn.NewReference(cfg, opt, g.Adj, g.Features, g.Labels, g.Train)
			var want [][]float64
			var wantLoss []float64
			for s := 0; s < 3; s++ {
				wantLoss = append(wantLoss, ref.LossAndGrad(s))
				for _, q := range ref.Params {
					want = append(want, append([]float64(nil), q.G...))
				}
				ref.Step()
			}
			for _, q := range ref.Params {
				want = append(want, q.W)
			}
			errs := collectives.RunLocal(p, func(w collectives.Comm) error {
				m, err := New(w, device.NewCPU(1), Options{Replication: c, Permutation: tc.scheme, PermSeed: 3}, cfg, opt, g)
				if err != nil {
					return err
				}
				var got [][]float64
				for s := 0; s < 3; s++ {
					loss, err := m.LossAndGrad()
					if err != nil {
						return err
					}
					if d := math.Abs(loss - wantLoss[s]); d > tol {
						return fmt.Errorf("rank %d step %d: loss %v, reference %v", w.Rank(), s, loss, wantLoss[s])
					}
					for _, q := range m.Params {
						got = append(got, append([]float64(nil), q.G...))
					}
					m.Step()
				}
				for _, q := range m.Params {
					got = append(got, q.W)
				}
				for i := range want {
					for k := range want[i] {
						if d := math.Abs(got[i][k] - want[i][k]); d > tol*(1+math.Abs(want[i][k])) {
							return fmt.Errorf("rank %d: tensor %d entry %d = %v, reference %v", w.Rank(), i, k, got[i][k], want[i][k])
						}
					}
				}
				return nil
			})
			for _, err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
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
		"c∤P":    {Options{Replication: 2}, cfg},
	} {
		errs := collectives.RunLocal(3, func(w collectives.Comm) error {
			_, err := New(w, device.NewCPU(1), tc.o, tc.cfg, gcn.DefaultOptimizer(), g)
			return err
		})
		if errs[0] == nil {
			t.Errorf("%s: accepted; want an error", name)
		}
	}
}
