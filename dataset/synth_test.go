package dataset

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func sameGraph(a, b *Graph) bool {
	return a.N == b.N && a.F == b.F && a.Classes == b.Classes &&
		slices.Equal(a.Adj.RowPtr, b.Adj.RowPtr) && slices.Equal(a.Adj.ColIdx, b.Adj.ColIdx) &&
		slices.Equal(a.Features, b.Features) && slices.Equal(a.Labels, b.Labels) &&
		slices.Equal(a.Train, b.Train) && slices.Equal(a.Val, b.Val) && slices.Equal(a.Test, b.Test)
}

func TestSBM(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*SBMConfig)
	}{
		{"default", func(*SBMConfig) {}},
		{"two classes", func(c *SBMConfig) { c.Classes = 2; c.Homophily = 0.3 }},
		{"heterophilous", func(c *SBMConfig) { c.Homophily = 0 }},
		{"no edges", func(c *SBMConfig) { c.AvgDegree = 0 }},
		{"uneven classes", func(c *SBMConfig) { c.N = 1001; c.Classes = 7 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultSBMConfig(1000)
			cfg.Seed = 42
			tc.edit(&cfg)
			g, err := SBM(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Validate(); err != nil {
				t.Fatal(err)
			}
			if g.N != cfg.N || g.F != cfg.Features || g.Classes != cfg.Classes {
				t.Errorf("N=%d F=%d C=%d", g.N, g.F, g.Classes)
			}
			// Edges: m = N·deg/2 sampled, a few lost to loops and repeats.
			m := float64(cfg.N) * cfg.AvgDegree / 2
			if e := float64(g.NumEdges()); e > m || e < 0.95*m {
				t.Errorf("%g edges, want about %g", e, m)
			}
			// Balanced classes.
			size := make([]int, g.Classes)
			for _, l := range g.Labels {
				size[l]++
			}
			if slices.Max(size)-slices.Min(size) > 1 {
				t.Errorf("class sizes %v not balanced", size)
			}
			// Homophily: fraction of entries inside a class.
			var in int
			for i := range g.N {
				for p := g.Adj.RowPtr[i]; p < g.Adj.RowPtr[i+1]; p++ {
					if g.Labels[i] == g.Labels[g.Adj.ColIdx[p]] {
						in++
					}
				}
			}
			want := cfg.Homophily
			if cfg.Classes == 1 {
				want = 1
			}
			if nnz := g.Adj.NNZ(); nnz > 0 {
				if h := float64(in) / float64(nnz); h < want-0.03 || h > want+0.03 {
					t.Errorf("homophily %.3f, want %.3f", h, want)
				}
			}
			if tr, va, te := Count(g.Train), Count(g.Val), Count(g.Test); tr != cfg.N/10 || va != cfg.N/5 || te != int(0.3*float64(cfg.N)) {
				t.Errorf("split %d/%d/%d", tr, va, te)
			}
			again, _ := SBM(cfg)
			if !sameGraph(g, again) {
				t.Error("same seed, different graph")
			}
			cfg.Seed++
			other, _ := SBM(cfg)
			if sameGraph(g, other) {
				t.Error("different seed, same graph")
			}
		})
	}
}

func TestRMAT(t *testing.T) {
	cfg := DefaultRMATConfig(12)
	cfg.Seed = 7
	g, err := RMAT(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	n := 1 << 12
	if g.N != n || g.F != 64 || g.Classes != 16 {
		t.Errorf("N=%d F=%d C=%d", g.N, g.F, g.Classes)
	}
	// R-MAT draws many repeats at this scale; well over half survive.
	if e := g.NumEdges(); e > 16*n || e < 8*n {
		t.Errorf("%d undirected edges from %d draws", e, 16*n)
	}
	maxDeg, mean := 0, float64(g.Adj.NNZ())/float64(n)
	for i := range n {
		maxDeg = max(maxDeg, int(g.Adj.RowPtr[i+1]-g.Adj.RowPtr[i]))
	}
	// Power law: the hubs dwarf the mean degree (about 25 here).
	if float64(maxDeg) < 20*mean {
		t.Errorf("max degree %d, mean %.1f: not skewed", maxDeg, mean)
	}
	// Unscrambled ids: vertex 0 (all-A path) is the top hub.
	if d0 := int(g.Adj.RowPtr[1]); d0 != maxDeg {
		t.Errorf("degree of vertex 0 is %d, max %d", d0, maxDeg)
	}
	again, _ := RMAT(cfg)
	if !sameGraph(g, again) {
		t.Error("same seed, different graph")
	}
	cfg.Seed++
	other, _ := RMAT(cfg)
	if sameGraph(g, other) {
		t.Error("different seed, same graph")
	}
}

// TestRMATLarge checks the scale the brief asks for: over a million edges
// in seconds.
func TestRMATLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large graph")
	}
	cfg := DefaultRMATConfig(16)
	cfg.Features = 8
	g, err := RMAT(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if g.NumEdges() < 500_000 {
		t.Errorf("%d edges", g.NumEdges())
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		frag string
	}{
		{"sbm N", func() error { c := DefaultSBMConfig(0); return c.Validate() }(), "dataset: sbm: nodes = 0: expected an integer in [classes = 8, 2147483647]"},
		{"sbm classes", func() error { c := DefaultSBMConfig(5); return c.Validate() }(), "dataset: sbm: nodes = 5: expected an integer in [classes = 8, 2147483647]"},
		{"sbm one class", func() error { c := DefaultSBMConfig(5); c.Classes = 1; return c.Validate() }(), "dataset: sbm: classes = 1: expected an integer >= 2"},
		{"sbm degree", func() error { c := DefaultSBMConfig(10); c.AvgDegree = 10; return c.Validate() }(), "dataset: sbm: avg_degree = 10: expected a number in [0, nodes - 1 = 9]"},
		{"sbm homophily", func() error { c := DefaultSBMConfig(100); c.Homophily = 1.5; return c.Validate() }(), "dataset: sbm: homophily = 1.5: expected a number in [0, 1]"},
		{"sbm features", func() error { c := DefaultSBMConfig(100); c.Features = 0; return c.Validate() }(), "dataset: sbm: features = 0: expected an integer >= 1"},
		{"sbm noise", func() error { c := DefaultSBMConfig(100); c.NoiseStd = -1; return c.Validate() }(), "dataset: sbm: feature_noise = -1: expected a finite number >= 0"},
		{"sbm noise inf", func() error { c := DefaultSBMConfig(100); c.NoiseStd = math.Inf(1); return c.Validate() }(), "dataset: sbm: feature_noise = +Inf"},
		{"sbm split", func() error { c := DefaultSBMConfig(100); c.TestFrac = 0.8; return c.Validate() }(), "dataset: sbm: train_fraction + val_fraction + test_fraction = 1.1: expected at most 1"},
		{"sbm frac NaN", func() error { c := DefaultSBMConfig(100); c.ValFrac = math.NaN(); return c.Validate() }(), "dataset: sbm: val_fraction = NaN: expected a number in [0, 1]"},
		{"sbm no training", func() error { c := DefaultSBMConfig(100); c.TrainFrac = 0; return c.Validate() }(), "dataset: sbm: train_fraction = 0: expected a number in (0, 1]"},
		{"rmat scale", func() error { c := DefaultRMATConfig(31); return c.Validate() }(), "dataset: rmat: scale = 31: expected an integer in [1, 30]"},
		{"rmat probs", func() error { c := DefaultRMATConfig(10); c.D = 0.2; return c.Validate() }(), "dataset: rmat: a + b + c + d = 1.15: expected 1"},
		{"rmat abc", func() error { c := DefaultRMATConfig(10); c.A = 0.9; return c.Validate() }(), "dataset: rmat: a + b + c = 1.28: expected at most 1"},
		{"rmat prob", func() error { c := DefaultRMATConfig(10); c.B = -0.1; return c.Validate() }(), "dataset: rmat: b = -0.1: expected a number in [0, 1]"},
		{"rmat edge factor", func() error { c := DefaultRMATConfig(10); c.EdgeFactor = 0; return c.Validate() }(), "dataset: rmat: edge_factor = 0"},
		{"rmat too many edges", func() error { c := DefaultRMATConfig(30); return c.Validate() }(), "edge_factor·2^scale <= 2^32"},
		{"rmat classes", func() error { c := DefaultRMATConfig(2); return c.Validate() }(), "dataset: rmat: classes = 16: expected an integer in [2, 4]"},
		{"rmat one class", func() error { c := DefaultRMATConfig(2); c.Classes = 1; return c.Validate() }(), "dataset: rmat: classes = 1: expected an integer in [2, 4]"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.frag) {
			t.Errorf("%s: got %v, want %q", tc.name, tc.err, tc.frag)
		}
	}
	if _, err := SBM(SBMConfig{}); err == nil {
		t.Error("SBM accepted a zero config")
	}
	if _, err := RMAT(RMATConfig{}); err == nil {
		t.Error("RMAT accepted a zero config")
	}
}
