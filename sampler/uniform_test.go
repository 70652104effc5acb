package sampler

import (
	"math"
	"slices"
	"testing"
)

func TestUniformIsASortedSubset(t *testing.T) {
	for _, c := range []struct{ n, b int }{{1, 1}, {10, 0}, {10, 1}, {10, 10}, {1000, 999}, {1000, 3}, {100000, 5000}} {
		s := Uniform(7, 0, 3, c.n, c.b)
		if len(s) != c.b {
			t.Fatalf("n=%d b=%d: %d vertices", c.n, c.b, len(s))
		}
		for i, v := range s {
			if v < 0 || int(v) >= c.n || (i > 0 && s[i-1] >= v) {
				t.Fatalf("n=%d b=%d: not a sorted subset of [0, n) at %d: %v", c.n, c.b, i, s[max(0, i-1):i+1])
			}
		}
	}
}

// TestUniformIsSharedWithinAGroupOnly: the sample is a function of (seed,
// group, step): the same call gives the same sample (every rank of a group
// derives it alone), and another group, step or seed a different one.
func TestUniformIsSharedWithinAGroupOnly(t *testing.T) {
	const n, b = 5000, 400
	base := Uniform(1, 2, 3, n, b)
	if !slices.Equal(base, Uniform(1, 2, 3, n, b)) {
		t.Fatal("the same (seed, group, step) gave two samples")
	}
	for _, other := range [][3]int{{1, 3, 3}, {1, 2, 4}, {2, 2, 3}, {1, 0, 3}} {
		s := Uniform(uint64(other[0]), other[1], other[2], n, b)
		// Two independent samples share about b²/n = 32 vertices.
		if common := overlapCount(base, s); common > b/2 {
			t.Errorf("(seed, group, step) = %v shares %d of %d vertices with (1, 2, 3)", other, common, b)
		}
	}
}

func overlapCount(a, b []int32) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return n
}

// TestUniformInclusionIsUniform: over many steps each vertex is drawn with
// probability b/n. Each count is binomial(draws, b/n) (per vertex; the
// counts are weakly negatively correlated), so a χ² over the n vertices has
// about n−1 degrees of freedom: mean n−1, standard deviation √(2(n−1)).
// Floyd's algorithm with a biased draw would fail this by far.
func TestUniformInclusionIsUniform(t *testing.T) {
	const n, b, draws = 60, 13, 30000
	count := make([]float64, n)
	pairs := 0.0 // draws holding both vertex 0 and vertex n−1
	for step := 0; step < draws; step++ {
		s := Uniform(99, 1, step, n, b)
		for _, v := range s {
			count[v]++
		}
		if s[0] == 0 && s[len(s)-1] == n-1 {
			pairs++
		}
	}
	p := float64(b) / n
	want := draws * p
	chi2 := 0.0
	for _, c := range count {
		chi2 += (c - want) * (c - want) / (want * (1 - p))
	}
	if dof := float64(n - 1); math.Abs(chi2-dof) > 5*math.Sqrt(2*dof) {
		t.Errorf("χ² = %.1f over %d vertices, expected %.0f ± %.1f", chi2, n, dof, math.Sqrt(2*dof))
	}
	// Pair inclusion b(b−1)/(n(n−1)) — what p = (B−1)/(N−1) rests on.
	pp := float64(b*(b-1)) / float64(n*(n-1))
	if sd := math.Sqrt(draws * pp * (1 - pp)); math.Abs(pairs-draws*pp) > 5*sd {
		t.Errorf("vertices 0 and %d together in %v draws, expected %.0f ± %.0f", n-1, pairs, draws*pp, sd)
	}
}

func TestBatchSize(t *testing.T) {
	for _, c := range []struct {
		n, count int
		ratio    float64
		want     int
		bad      bool
	}{
		{100, 10, 0, 10, false}, {100, 100, 0, 100, false}, {100, 0, 0.25, 25, false}, {100, 0, 1, 100, false},
		{3, 0, 0.01, 1, false}, {100, 0, 0, 0, true}, {100, 101, 0, 0, true}, {100, -1, 0, 0, true},
		{100, 0, 1.5, 0, true}, {100, 0, -0.1, 0, true}, {100, 5, 0.5, 0, true},
	} {
		got, err := BatchSize(c.n, c.count, c.ratio)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("BatchSize(%d, %d, %g) = %d, %v; want %d, error %v", c.n, c.count, c.ratio, got, err, c.want, c.bad)
		}
	}
}

func TestPositionsAndBounds(t *testing.T) {
	verts := []int32{1, 4, 5, 8}
	inv := []int32{9, 0, 2, 3, 7, 1, 4, 5, 6, 8} // vertex → position
	pos := Positions(verts, inv)
	if want := []int32{0, 1, 6, 7}; !slices.Equal(pos, want) {
		t.Fatalf("Positions = %v, want %v", pos, want)
	}
	if !slices.Equal(Positions(verts, nil), verts) {
		t.Fatal("Positions with the identity changed the sample")
	}
	// Blocks of 10 positions over 3 parts: [0,4) [4,7) [7,10).
	block := func(i int) (int, int) { return []int{0, 4, 7}[i], []int{4, 7, 10}[i] }
	if got, want := Bounds(pos, 3, block), []int{0, 2, 3, 4}; !slices.Equal(got, want) {
		t.Fatalf("Bounds = %v, want %v", got, want)
	}
}

func TestInclusionProbability(t *testing.T) {
	for _, c := range []struct {
		n, b int
		want float64
	}{{10, 10, 1}, {1, 1, 1}, {11, 6, 0.5}, {101, 1, 0}} {
		if got := InclusionProbability(c.n, c.b); got != c.want {
			t.Errorf("InclusionProbability(%d, %d) = %g, want %g", c.n, c.b, got, c.want)
		}
	}
}

func BenchmarkUniform1MOf10M(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Uniform(1, 0, i, 10_000_000, 1_000_000)
	}
}
