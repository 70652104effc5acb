package grappa

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"scalegnn/grid"
	"scalegnn/spmm"
)

// csr builds a symmetric binary adjacency from undirected edges.
func csr(n int, edges [][2]int32) *spmm.CSR {
	adj := make([][]bool, n)
	for i := range adj {
		adj[i] = make([]bool, n)
	}
	for _, e := range edges {
		adj[e[0]][e[1]], adj[e[1]][e[0]] = true, true
	}
	a := &spmm.CSR{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	for i := range n {
		for j := range n {
			if adj[i][j] {
				a.ColIdx = append(a.ColIdx, int32(j))
				a.Val = append(a.Val, 1)
			}
		}
		a.RowPtr[i+1] = int64(len(a.ColIdx))
	}
	return a
}

func randomGraph(n, m int, seed uint64) *spmm.CSR {
	r := rand.New(rand.NewPCG(seed, 1))
	var e [][2]int32
	for len(e) < m {
		u, v := r.IntN(n), r.IntN(n)
		if u != v {
			e = append(e, [2]int32{int32(u), int32(v)})
		}
	}
	return csr(n, e)
}

// reversed is the order n−1, …, 0.
func reversed(n int) []int32 {
	o := make([]int32, n)
	for i := range o {
		o[i] = int32(n - 1 - i)
	}
	return o
}

// TestSplitOrder: chunk c holds the vertices at the positions of block c
// of the order (grid.Block's split), the rows of a prepared dataset's
// block c.
func TestSplitOrder(t *testing.T) {
	order := reversed(10)
	ch, err := SplitOrder(order, 3)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		lo, hi := grid.Block(10, 3, k)
		want := slices.Clone(order[lo:hi])
		slices.Sort(want)
		if !slices.Equal(ch.Members[k], want) {
			t.Errorf("chunk %d = %v, want the vertices of positions [%d, %d): %v", k, ch.Members[k], lo, hi, want)
		}
	}
	if _, err := SplitOrder(order, 11); err == nil {
		t.Error("11 chunks of 10 vertices accepted")
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct{ n, c int }{{10, 1}, {10, 3}, {10, 10}, {1000, 7}} {
		for name, split := range map[string]func() (*Chunks, error){
			"random": func() (*Chunks, error) { return SplitRandom(tc.n, tc.c, 42) },
			"blocks": func() (*Chunks, error) { return SplitBlocks(tc.n, tc.c) },
			"order": func() (*Chunks, error) {
				return SplitOrder(reversed(tc.n), tc.c)
			},
		} {
			ch, err := split()
			if err != nil {
				t.Fatalf("%s n=%d c=%d: %v", name, tc.n, tc.c, err)
			}
			seen := make([]int, tc.n)
			lo, hi := tc.n, 0
			for k, m := range ch.Members {
				lo, hi = min(lo, len(m)), max(hi, len(m))
				for i, v := range m {
					seen[v]++
					if int(ch.Of[v]) != k || i > 0 && m[i-1] >= v {
						t.Fatalf("%s n=%d c=%d: chunk %d member %d inconsistent or unsorted", name, tc.n, tc.c, k, v)
					}
				}
			}
			for v, s := range seen {
				if s != 1 {
					t.Fatalf("%s n=%d c=%d: vertex %d in %d chunks", name, tc.n, tc.c, v, s)
				}
			}
			if hi-lo > 1 {
				t.Errorf("%s n=%d c=%d: chunk sizes %d..%d, want within one", name, tc.n, tc.c, lo, hi)
			}
		}
	}
	a, _ := SplitRandom(100, 4, 7)
	b, _ := SplitRandom(100, 4, 7)
	for v := range a.Of {
		if a.Of[v] != b.Of[v] {
			t.Fatal("SplitRandom not deterministic for a fixed seed")
		}
	}
	if _, err := SplitRandom(3, 4, 1); err == nil {
		t.Error("4 chunks of 3 vertices accepted")
	}
}

// TestScheduleCoversPairs: within Cover super-epochs every unordered pair
// of chunks shares some worker's partition, Cover = M = C−1 when C = W,
// and a move inside a rotation loads only the new swept chunk.
func TestScheduleCoversPairs(t *testing.T) {
	for _, tc := range []struct{ w, c, cover int }{
		{1, 1, 1}, {2, 2, 1}, {4, 4, 3}, {8, 8, 7}, {2, 5, 12}, {3, 7, 18}, {4, 9, 24}, {1, 3, 6},
	} {
		sc, err := NewSchedule(tc.w, tc.c)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Cover() != tc.cover {
			t.Errorf("W=%d C=%d: Cover %d, want %d", tc.w, tc.c, sc.Cover(), tc.cover)
		}
		met := map[[2]int]bool{}
		for s := range sc.Cover() {
			for w := range tc.w {
				b, x := sc.Partition(w, s)
				if tc.c > 1 && b == x {
					t.Fatalf("W=%d C=%d: worker %d super-epoch %d pairs chunk %d with itself", tc.w, tc.c, w, s, b)
				}
				met[[2]int{min(b, x), max(b, x)}] = true
				if tc.c > 2 && (s+1)%(tc.c-1) != 0 { // inside a base rotation
					// The next partition keeps the base: one new chunk to read.
					if b1, x1 := sc.Partition(w, s+1); b1 != b || x1 == x {
						t.Errorf("W=%d C=%d: worker %d moves from (%d, %d) to (%d, %d) after super-epoch %d, want one new chunk", tc.w, tc.c, w, b, x, b1, x1, s)
					}
				}
			}
		}
		for i := range tc.c {
			for j := i + 1; j < tc.c; j++ {
				if !met[[2]int{i, j}] {
					t.Errorf("W=%d C=%d: chunks %d and %d never share a partition in %d super-epochs", tc.w, tc.c, i, j, sc.Cover())
				}
			}
		}
	}
	if _, err := NewSchedule(4, 3); err == nil {
		t.Error("3 chunks for 4 workers accepted")
	}
}

func TestBuild(t *testing.T) {
	// Path 0-1-2-3-4-5 with chunks {0,1},{2,3},{4,5}; training vertices 1, 5.
	adj := csr(6, [][2]int32{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}})
	ch, _ := SplitBlocks(6, 3)
	train := []bool{false, true, false, false, false, true}
	for _, tc := range []struct {
		kind        Kind
		hops        int
		base, swept int
		verts       []int32
		train       []int32
		local, glob []int
	}{
		{Induced, 2, 0, 2, []int32{0, 1, 4, 5}, []int32{1, 3}, []int{2, 2}, []int{3, 2}},
		{Halo, 1, 0, 2, []int32{0, 1, 2, 4, 5}, []int32{1, 4}, []int{3, 2}, []int{3, 2}},
		{Halo, 2, 0, 2, []int32{0, 1, 2, 3, 4, 5}, []int32{1, 5}, []int{3, 2}, []int{3, 2}},
		{Induced, 2, 1, 0, []int32{0, 1, 2, 3}, []int32{1}, []int{3}, []int{3}},
	} {
		p := Build(adj, ch, train, tc.base, tc.swept, tc.kind, tc.hops)
		if !equal(p.Verts, tc.verts) || !equal(p.Train, tc.train) {
			t.Errorf("kind %d hops %d chunks %d+%d: verts %v train %v, want %v %v", tc.kind, tc.hops, tc.base, tc.swept, p.Verts, p.Train, tc.verts, tc.train)
			continue
		}
		l, g := Degrees(adj, p)
		if !equal(l, tc.local) || !equal(g, tc.glob) {
			t.Errorf("kind %d hops %d: degrees %v/%v, want %v/%v", tc.kind, tc.hops, l, g, tc.local, tc.glob)
		}
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFactorHand(t *testing.T) {
	for _, tc := range []struct {
		c           Correction
		local, glob []int
		want        float64
	}{
		{None, []int{2, 3}, []int{4, 3}, 1},
		{Batch, []int{2, 3}, []int{4, 3}, 0.75},
		{Shrinkage, []int{2, 3}, []int{4, 3}, 0.5},
		{Batch, []int{1, 5}, []int{1, 5}, 1},
		{Shrinkage, []int{1, 5}, []int{1, 5}, 1},
		{Shrinkage, []int{1, 4}, []int{1, 5}, 1},
		{Shrinkage, []int{1, 1, 2}, []int{3, 2, 5}, 1.0 / 6},
		{Batch, nil, nil, 1},
	} {
		if got := tc.c.Factor(tc.local, tc.glob); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%d.Factor(%v, %v) = %v, want %v", tc.c, tc.local, tc.glob, got, tc.want)
		}
	}
}

// TestEstimatorEnumerated enumerates every partition of the sweep on a
// small random graph. For each worker's partition it checks, per batch:
// (i) the batch factor is the minimum-distance scalar of Theorem 3.2 —
// argmin_c ||E[∇L^corr] − c·E[∇g_S]||² with i.i.d. per-neighbor gradients
// of mean μ, computed by projection in float64 from the per-vertex sums —
// and (ii) shrinkage never exceeds one. Over the whole sweep it checks the
// support condition (5) of Theorem 3.1: every edge's long-run local
// inclusion frequency q_v(u), counted exactly, is positive.
func TestEstimatorEnumerated(t *testing.T) {
	const n, m, dim = 40, 90, 5
	adj := randomGraph(n, m, 3)
	train := make([]bool, n)
	for v := 0; v < n; v += 2 {
		train[v] = true
	}
	r := rand.New(rand.NewPCG(9, 9))
	mu := make([]float64, dim)
	for i := range mu {
		mu[i] = r.NormFloat64()
	}
	for _, tc := range []struct{ w, c int }{{2, 2}, {4, 4}, {3, 5}, {8, 8}} {
		ch, _ := SplitRandom(n, tc.c, 11)
		sc, _ := NewSchedule(tc.w, tc.c)
		seen := map[[2]int32]int{} // (v,u) edge: super-epoch partitions holding v's loss with u local
		for s := range sc.Cover() {
			for w := range tc.w {
				b, x := sc.Partition(w, s)
				p := Build(adj, ch, train, b, x, Induced, 2)
				local, global := Degrees(adj, p)
				in := map[int32]bool{}
				for _, v := range p.Verts {
					in[v] = true
				}
				// E[∇g_S]: per vertex the mean over its local neighbors (self
				// included) of gradients of mean μ, i.e. μ; E[∇L^corr]
				// weights each vertex by d_local/d_global (eq. 9).
				gS, gC := make([]float64, dim), make([]float64, dim)
				for i, tl := range p.Train {
					v := p.Verts[tl]
					for _, u := range adj.ColIdx[adj.RowPtr[v]:adj.RowPtr[v+1]] {
						if in[u] {
							seen[[2]int32{v, u}]++
						}
					}
					for k := range dim {
						gS[k] += mu[k] / float64(len(p.Train))
						gC[k] += mu[k] * float64(local[i]) / float64(global[i]) / float64(len(p.Train))
					}
				}
				if len(p.Train) == 0 {
					continue
				}
				dot, nn := 0.0, 0.0
				for k := range dim {
					dot += gS[k] * gC[k]
					nn += gS[k] * gS[k]
				}
				cStar := dot / nn
				if got := Batch.Factor(local, global); math.Abs(got-cStar) > 1e-12 {
					t.Errorf("W=%d C=%d worker %d super-epoch %d: batch factor %v, minimum-distance scalar %v", tc.w, tc.c, w, s, got, cStar)
				}
				if f := Shrinkage.Factor(local, global); f > 1 || f <= 0 {
					t.Errorf("W=%d C=%d: shrinkage factor %v outside (0, 1]", tc.w, tc.c, f)
				}
			}
		}
		for v := range n {
			if !train[v] {
				continue
			}
			for _, u := range adj.ColIdx[adj.RowPtr[v]:adj.RowPtr[v+1]] {
				if seen[[2]int32{int32(v), u}] == 0 {
					t.Errorf("W=%d C=%d: edge %d-%d never local to %d's loss in %d super-epochs", tc.w, tc.c, v, u, v, sc.Cover())
				}
			}
		}
	}
}

func TestController(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        Controller
		coverage []float64 // one step per epoch
		switches []bool
	}{
		{"fixed", Controller{EpochsPerSuperEpoch: 2, Deficit: 1}, []float64{0.1, 0.1, 0.1, 0.1}, []bool{false, true, false, true}},
		{"early", Controller{EpochsPerSuperEpoch: 10, Deficit: 0.3, Patience: 2}, []float64{0.5, 0.5, 0.9, 0.5, 0.5}, []bool{false, true, false, false, true}},
	} {
		for i, cv := range tc.coverage {
			tc.c.Step(cv)
			if got := tc.c.EndEpoch(); got != tc.switches[i] {
				t.Errorf("%s: epoch %d switch %v, want %v", tc.name, i, got, tc.switches[i])
			}
		}
	}
}

// TestLoader: the partitions loaded, prefetched or not, equal Build's,
// and the chunk reads are those a partition holds that the rank's
// previous one did not: with one partition per rank, two to start plus
// one per super-epoch boundary inside a rotation (two where the base
// rotates); with several, every phase's partition in turn.
func TestLoader(t *testing.T) {
	adj := randomGraph(30, 60, 5)
	train := make([]bool, 30)
	for v := 0; v < 30; v += 3 {
		train[v] = true
	}
	for _, tc := range []struct {
		p, m, c, rank int
		prefetch      bool
		loads         int // -1: not counted by hand
	}{
		{4, 4, 4, 0, true, 2 + 2},  // 3 super-epochs, 2 boundaries, one chunk each
		{2, 2, 4, 0, true, 2 + 5},  // 6 super-epochs, 5 boundaries of one chunk: at the rotation the new base is the chunk already swept in
		{1, 1, 1, 0, true, 1},      // one chunk: the whole graph
		{4, 4, 4, 0, false, 2 + 2}, // built on demand, the same reads
		{4, 2, 4, 1, true, -1},     // two phases of two ranks
		{6, 1, 6, 0, true, -1},     // six phases on one rank
		{6, 3, 7, 2, false, -1},
	} {
		name := fmt.Sprintf("P=%d M=%d C=%d rank %d prefetch %v", tc.p, tc.m, tc.c, tc.rank, tc.prefetch)
		ch, _ := SplitRandom(30, tc.c, 1)
		sc, _ := NewSchedule(tc.p, tc.c)
		ph, err := NewPhases(tc.p, tc.m)
		if err != nil {
			t.Fatal(err)
		}
		// The rank's slots: every super-epoch, one epoch of every phase.
		var slots []Slot
		for s := range sc.Cover() {
			for i := range ph.Count() {
				slots = append(slots, Slot{SuperEpoch: s, Part: ph.Partition(tc.rank, i)})
			}
		}
		var bytes int64
		loads := 0
		var held []int
		for _, sl := range slots {
			b, x := sc.Partition(sl.Part, sl.SuperEpoch)
			now := []int{b}
			if x != b {
				now = append(now, x)
			}
			for _, c := range now {
				if !slices.Contains(held, c) {
					bytes += ChunkBytes(adj, ch, c, 7)
					loads++
				}
			}
			held = now
		}
		build := func(b, x int) (Partition, int64, error) { return Build(adj, ch, train, b, x, Halo, 2), 0, nil }
		l := NewLoader(sc, build, func(c int) int64 { return ChunkBytes(adj, ch, c, 7) }, slots[0])
		for k, sl := range slots {
			got, err := l.Load(sl)
			if err != nil {
				t.Fatal(err)
			}
			if tc.prefetch && k+1 < len(slots) {
				l.Prefetch(slots[k+1])
			}
			b, x := sc.Partition(sl.Part, sl.SuperEpoch)
			want := Build(adj, ch, train, b, x, Halo, 2)
			if !equal(got.Verts, want.Verts) || !equal(got.Train, want.Train) {
				t.Fatalf("%s: slot %+v: loaded partition differs from Build", name, sl)
			}
		}
		l.Close()
		if tc.loads >= 0 && loads != tc.loads {
			t.Fatalf("%s: the hand count says %d loads, the rule %d", name, tc.loads, loads)
		}
		if l.Loads != loads {
			t.Errorf("%s: %d chunk loads over %d slots, want %d", name, l.Loads, len(slots), loads)
		}
		if l.Bytes != bytes {
			t.Errorf("%s: chunk loads counted %d bytes, want %d", name, l.Bytes, bytes)
		}
	}
}

// TestPhases: every partition is trained by exactly one rank in exactly
// one phase of an epoch, bad shapes are refused, and misuse panics.
func TestPhases(t *testing.T) {
	for _, tc := range []struct{ p, m int }{{1, 1}, {4, 4}, {4, 2}, {4, 1}, {6, 3}, {12, 4}} {
		ph, err := NewPhases(tc.p, tc.m)
		if err != nil {
			t.Fatalf("P=%d M=%d: %v", tc.p, tc.m, err)
		}
		if ph.Count()*tc.m != tc.p {
			t.Errorf("P=%d M=%d: %d phases", tc.p, tc.m, ph.Count())
		}
		seen := make([]int, tc.p)
		for r := range tc.m {
			for i := range ph.Count() {
				seen[ph.Partition(r, i)]++
			}
		}
		for p, n := range seen {
			if n != 1 {
				t.Errorf("P=%d M=%d: partition %d trained %d times an epoch", tc.p, tc.m, p, n)
			}
		}
	}
	for _, tc := range []struct{ p, m int }{{3, 2}, {1, 2}, {0, 1}, {4, 0}, {5, 3}} {
		if _, err := NewPhases(tc.p, tc.m); err == nil || !strings.Contains(err.Error(), "grappa.partitions") {
			t.Errorf("P=%d M=%d: error %v, want one naming grappa.partitions", tc.p, tc.m, err)
		}
	}
	ph, _ := NewPhases(4, 2)
	for _, bad := range [][2]int{{2, 0}, {0, 2}, {-1, 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Partition(%d, %d) with 4 partitions on 2 ranks did not panic", bad[0], bad[1])
				}
			}()
			ph.Partition(bad[0], bad[1])
		}()
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		params, w int
		want      int64
	}{{1000, 1, 0}, {1000, 2, 4000}, {1000, 4, 6000}, {1000, 8, 7000}} {
		if got := GradientBytes(tc.params, tc.w); got != tc.want {
			t.Errorf("GradientBytes(%d, %d) = %d, want %d", tc.params, tc.w, got, tc.want)
		}
	}
	// Path 0-1-2-3: chunk {0,1} has 3 adjacency entries.
	adj := csr(4, [][2]int32{{0, 1}, {1, 2}, {2, 3}})
	ch, _ := SplitBlocks(4, 2)
	if got, want := ChunkBytes(adj, ch, 0, 10), int64(8*2+8*3+4*10*2+5*2); got != want {
		t.Errorf("ChunkBytes = %d, want %d", got, want)
	}
}
