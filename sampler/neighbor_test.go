package sampler

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"scalegnn/spmm"
)

// neighborGraph returns an n-vertex adjacency with the degrees a sampler
// must handle: vertex 0 a hub adjacent to every other vertex, vertex 1
// isolated, vertex 2 with 100 neighbors (above linearMax fanouts), the
// rest with random degrees in [0, 40], columns sorted and distinct.
func neighborGraph(n int, seed uint64) *spmm.CSR {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	a := &spmm.CSR{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	for v := 0; v < n; v++ {
		var row []int32
		switch v {
		case 0:
			for u := 1; u < n; u++ {
				row = append(row, int32(u))
			}
		case 1:
		case 2:
			for _, u := range rng.Perm(n)[:100] {
				row = append(row, int32(u))
			}
		default:
			for _, u := range rng.Perm(n)[:rng.IntN(41)] {
				row = append(row, int32(u))
			}
		}
		slices.Sort(row)
		a.ColIdx = append(a.ColIdx, row...)
		a.RowPtr[v+1] = int64(len(a.ColIdx))
	}
	a.Val = make([]float32, len(a.ColIdx))
	return a
}

func adjRow(a *spmm.CSR, v int32) []int32 { return a.ColIdx[a.RowPtr[v]:a.RowPtr[v+1]] }

// checkMFGs checks every property of the MFGs the samplers promise:
// shapes, the seeds as the last layer's rows, each layer's rows as the
// next one's sources, distinct sources with the destinations as prefix,
// rows of min(fanout, degree) distinct true neighbors in ascending local
// order with mean weights, and new sources numbered by first appearance.
func checkMFGs(t *testing.T, adj *spmm.CSR, fanouts []int, seeds []int32, out *MFGs) {
	t.Helper()
	L := len(fanouts)
	if len(out.Layers) != L {
		t.Fatalf("%d layers, want %d", len(out.Layers), L)
	}
	if !slices.Equal(out.Seeds(), seeds) {
		t.Fatalf("last layer's destinations %v, want the seeds %v", out.Seeds(), seeds)
	}
	for l := range L {
		m := &out.Layers[l]
		a := &m.A
		if l < L-1 && !slices.Equal(m.Dst(), out.Layers[l+1].Src) {
			t.Fatalf("layer %d: destinations are not layer %d's sources", l, l+1)
		}
		if a.Cols != len(m.Src) || len(a.RowPtr) != a.Rows+1 || a.RowPtr[0] != 0 ||
			len(a.ColIdx) != a.NNZ() || len(a.Val) != a.NNZ() {
			t.Fatalf("layer %d: shape %d×%d with %d row pointers, %d sources, %d columns, %d values, nnz %d",
				l, a.Rows, a.Cols, len(a.RowPtr), len(m.Src), len(a.ColIdx), len(a.Val), a.NNZ())
		}
		seen := map[int32]bool{}
		for _, u := range m.Src {
			if seen[u] {
				t.Fatalf("layer %d: source %d twice", l, u)
			}
			seen[u] = true
		}
		firstRow := make([]int, len(m.Src))
		for j := range firstRow {
			firstRow[j] = -1
		}
		for i := 0; i < a.Rows; i++ {
			v := m.Src[i]
			row := a.ColIdx[a.RowPtr[i]:a.RowPtr[i+1]]
			nb := adjRow(adj, v)
			if want := min(fanouts[l], len(nb)); len(row) != want {
				t.Fatalf("layer %d, vertex %d (degree %d): %d neighbors, want min(fanout %d, degree) = %d",
					l, v, len(nb), len(row), fanouts[l], want)
			}
			for k, c := range row {
				if k > 0 && row[k-1] >= c {
					t.Fatalf("layer %d, vertex %d: local ids %v not strictly ascending (a repeat is a draw with replacement)", l, v, row)
				}
				if _, ok := slices.BinarySearch(nb, m.Src[c]); !ok {
					t.Fatalf("layer %d, vertex %d: sampled %d, not a neighbor", l, v, m.Src[c])
				}
				if w := a.Val[a.RowPtr[i]+int64(k)]; w != 1/float32(len(row)) {
					t.Fatalf("layer %d, vertex %d: weight %g, want 1/%d", l, v, w, len(row))
				}
				if firstRow[c] < 0 {
					firstRow[c] = i
				}
			}
		}
		for j := a.Rows; j < len(m.Src); j++ {
			if firstRow[j] < 0 {
				t.Fatalf("layer %d: source %d (vertex %d) is in no row", l, j, m.Src[j])
			}
			if j > a.Rows && firstRow[j] < firstRow[j-1] {
				t.Fatalf("layer %d: source %d first appears in row %d, before source %d's row %d: not numbered by first appearance",
					l, j, firstRow[j], j-1, firstRow[j-1])
			}
		}
	}
}

// sampledSets maps (layer, vertex) to the sorted global ids of the
// neighbors the vertex drew in that layer.
func sampledSets(out *MFGs) map[[2]int32][]int32 {
	sets := map[[2]int32][]int32{}
	for l := range out.Layers {
		m := &out.Layers[l]
		for i := 0; i < m.A.Rows; i++ {
			var nb []int32
			for _, c := range m.A.ColIdx[m.A.RowPtr[i]:m.A.RowPtr[i+1]] {
				nb = append(nb, m.Src[c])
			}
			slices.Sort(nb)
			sets[[2]int32{int32(l), m.Src[i]}] = nb
		}
	}
	return sets
}

// mfgsEqual reports the first difference between two MFGs, array by array.
func mfgsEqual(x, y *MFGs) error {
	if len(x.Layers) != len(y.Layers) {
		return fmt.Errorf("%d layers vs %d", len(x.Layers), len(y.Layers))
	}
	for l := range x.Layers {
		a, b := &x.Layers[l], &y.Layers[l]
		switch {
		case a.A.Rows != b.A.Rows || a.A.Cols != b.A.Cols:
			return fmt.Errorf("layer %d: %d×%d vs %d×%d", l, a.A.Rows, a.A.Cols, b.A.Rows, b.A.Cols)
		case !slices.Equal(a.A.RowPtr, b.A.RowPtr):
			return fmt.Errorf("layer %d: row pointers differ", l)
		case !slices.Equal(a.A.ColIdx, b.A.ColIdx):
			return fmt.Errorf("layer %d: column indices differ", l)
		case !slices.Equal(a.A.Val, b.A.Val):
			return fmt.Errorf("layer %d: values differ", l)
		case !slices.Equal(a.Src, b.Src):
			return fmt.Errorf("layer %d: sources differ", l)
		}
	}
	return nil
}

// TestNeighborSamplerMFGs: for several fanout lists (linear and hashed
// membership tests, one layer and three), seed sets and steps, the fused
// sampler's MFGs have every promised property, the unfused sampler's are
// the same arrays (with the dense map and with HashRelabel), and so are
// the fused sampler's on 1, 2 and 3 threads.
func TestNeighborSamplerMFGs(t *testing.T) {
	adj := neighborGraph(3000, 1)
	cases := []struct {
		fanouts []int
		seeds   int
	}{
		{[]int{15, 10, 5}, 64},
		{[]int{3}, 200},
		{[]int{40, 35}, 50},
		{[]int{25, 10}, 512},
	}
	for _, c := range cases {
		for _, threads := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("fanouts=%v/seeds=%d/threads=%d", c.fanouts, c.seeds, threads), func(t *testing.T) {
				s := NewNeighborSampler(adj, c.fanouts, NeighborOptions{Threads: threads})
				defer s.Close()
				ref := NewNeighborSampler(adj, c.fanouts, NeighborOptions{Threads: 1})
				defer ref.Close()
				hs := NewNeighborSampler(adj, c.fanouts, NeighborOptions{Threads: threads, HashRelabel: true})
				defer hs.Close()
				var fused, unfused, hashed, serial MFGs
				for step := range 4 {
					// Seeds in a random order, with the hub (vertex 0),
					// the isolated vertex 1 and vertex 2 among them.
					seeds := Uniform(7, 0, step, adj.Rows, c.seeds)
					seeds[0], seeds[1], seeds[2] = 0, 1, 2
					slices.Sort(seeds)
					seeds = slices.Compact(seeds)
					rand.New(rand.NewPCG(uint64(step), 3)).Shuffle(len(seeds), func(i, j int) { seeds[i], seeds[j] = seeds[j], seeds[i] })
					key := Key{Seed: 11, Step: step}
					s.SampleInto(&fused, seeds, key)
					checkMFGs(t, adj, c.fanouts, seeds, &fused)
					s.SampleUnfusedInto(&unfused, seeds, key)
					if err := mfgsEqual(&fused, &unfused); err != nil {
						t.Fatalf("step %d: fused and unfused MFGs differ: %v", step, err)
					}
					hs.SampleUnfusedInto(&hashed, seeds, key)
					if err := mfgsEqual(&fused, &hashed); err != nil {
						t.Fatalf("step %d: fused MFGs and unfused ones relabelled by a hash map differ: %v", step, err)
					}
					ref.SampleInto(&serial, seeds, key)
					if err := mfgsEqual(&fused, &serial); err != nil {
						t.Fatalf("step %d: %d threads and 1 differ: %v", step, threads, err)
					}
				}
			})
		}
	}
}

// TestNeighborSamplerRanks: the seeds of one step split over 1, 2 and 8
// ranks (strided, so each rank also sees them in another order), each
// rank with a sampler of its own: every (layer, vertex) any rank samples
// draws the same neighbors as on one rank, and the ranks' destinations
// of each layer together are exactly the one rank's.
func TestNeighborSamplerRanks(t *testing.T) {
	adj := neighborGraph(2000, 2)
	fanouts := []int{15, 10, 5}
	seeds := Uniform(5, 0, 0, adj.Rows, 96)
	key := Key{Seed: 99, Step: 17}
	var one MFGs
	s := NewNeighborSampler(adj, fanouts, NeighborOptions{Threads: 2})
	defer s.Close()
	s.SampleInto(&one, seeds, key)
	want := sampledSets(&one)
	for _, ranks := range []int{2, 8} {
		got := map[[2]int32][]int32{}
		for r := range ranks {
			var mine []int32
			for i := r; i < len(seeds); i += ranks {
				mine = append(mine, seeds[len(seeds)-1-i]) // reversed order
			}
			rs := NewNeighborSampler(adj, fanouts, NeighborOptions{Threads: 1})
			var out MFGs
			rs.SampleUnfusedInto(&out, mine, key)
			rs.Close()
			for k, nb := range sampledSets(&out) {
				w, ok := want[k]
				if !ok {
					t.Fatalf("%d ranks: rank %d samples vertex %d in layer %d, which one rank does not", ranks, r, k[1], k[0])
				}
				if !slices.Equal(nb, w) {
					t.Fatalf("%d ranks: rank %d, layer %d, vertex %d drew %v; one rank drew %v", ranks, r, k[0], k[1], nb, w)
				}
				got[k] = nb
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%d ranks sample %d (layer, vertex) pairs together; one rank samples %d", ranks, len(got), len(want))
		}
	}
}

// TestNeighborSamplerFullNeighborhood: with fanouts at least the maximum
// degree every row is the vertex's whole neighborhood, so the input
// frontier is the seeds' full L-hop neighborhood.
func TestNeighborSamplerFullNeighborhood(t *testing.T) {
	adj := neighborGraph(500, 3)
	fanouts := []int{adj.Rows, adj.Rows}
	seeds := []int32{7, 3, 1, 0, 250}
	s := NewNeighborSampler(adj, fanouts, NeighborOptions{})
	defer s.Close()
	var out MFGs
	s.SampleInto(&out, seeds, Key{Seed: 1, Step: 2})
	checkMFGs(t, adj, fanouts, seeds, &out)
	for k, nb := range sampledSets(&out) {
		if !slices.Equal(nb, adjRow(adj, k[1])) {
			t.Fatalf("layer %d, vertex %d: %v, want its neighborhood %v", k[0], k[1], nb, adjRow(adj, k[1]))
		}
	}
	hop := map[int32]bool{}
	for _, v := range seeds {
		hop[v] = true
	}
	for range fanouts {
		next := map[int32]bool{}
		for v := range hop {
			next[v] = true
			for _, u := range adjRow(adj, v) {
				next[u] = true
			}
		}
		hop = next
	}
	in := out.Input()
	if len(in) != len(hop) {
		t.Fatalf("input frontier of %d vertices, want the %d of the 2-hop neighborhood", len(in), len(hop))
	}
	for _, v := range in {
		if !hop[v] {
			t.Fatalf("input vertex %d is not within 2 hops", v)
		}
	}
}

// TestNeighborSamplerKey: the draws change with the seed, the step and
// the layer (a hub of degree 2999 keeping 10 would repeat a draw with
// probability ~1e-28), and repeat for the same key.
func TestNeighborSamplerKey(t *testing.T) {
	adj := neighborGraph(3000, 4)
	s := NewNeighborSampler(adj, []int{10, 10}, NeighborOptions{Threads: 1})
	defer s.Close()
	draw := func(k Key) (l0, l1 []int32) {
		var out MFGs
		s.SampleInto(&out, []int32{0}, k)
		sets := sampledSets(&out)
		return sets[[2]int32{0, 0}], sets[[2]int32{1, 0}]
	}
	a0, a1 := draw(Key{Seed: 1, Step: 5})
	b0, b1 := draw(Key{Seed: 1, Step: 5})
	if !slices.Equal(a0, b0) || !slices.Equal(a1, b1) {
		t.Fatal("the same key drew different neighbors")
	}
	if slices.Equal(a0, a1) {
		t.Fatal("the hub drew the same neighbors in both layers")
	}
	for _, k := range []Key{{Seed: 2, Step: 5}, {Seed: 1, Step: 6}} {
		if _, c1 := draw(k); slices.Equal(a1, c1) {
			t.Fatalf("key %+v drew what {1 5} drew", k)
		}
	}
}

// chi2Crit is the χ² quantile with p-value 1e-3 at k degrees of freedom,
// by Wilson and Hilferty's approximation (within 0.3% of the exact
// quantile for k >= 10: 43.94 for k = 19 against 43.82).
func chi2Crit(k int) float64 {
	const z = 3.0902 // the standard normal's 1 − 1e-3 quantile
	h := 2 / (9 * float64(k))
	return float64(k) * math.Pow(1-h+z*math.Sqrt(h), 3)
}

// TestNeighborSamplerUniform: sampling is uniform without replacement.
// Over T steps (fixed seed, so the test is deterministic), each neighbor
// of a vertex of degree d keeping k is included about T·k/d times. The
// inclusion counts of a uniform k-subset have variance T·p(1−p), p = k/d,
// and covariance −T·p(1−p)/(d−1), so Σ (o−e)²·(d−1)/(d·T·p(1−p)) is χ²
// with d−1 degrees of freedom; it must stay below the 1e-3 quantile.
// Fanout 5 of 20 runs Floyd's linear membership test, 40 of 100 its hash
// set. For a vertex of degree 6 keeping 3, the 20 possible subsets are
// counted too (a sampler can include each neighbor uniformly and still
// favour some subsets): Pearson's χ² with 19 degrees of freedom.
func TestNeighborSamplerUniform(t *testing.T) {
	// Vertex 0 has neighbors 1..20, vertex 1 the 100 vertices 200..299,
	// vertex 2 the 6 vertices 10..15.
	var rows [][]int32
	r0, r1, r2 := []int32{}, []int32{}, []int32{}
	for u := int32(1); u <= 20; u++ {
		r0 = append(r0, u)
	}
	for u := int32(200); u < 300; u++ {
		r1 = append(r1, u)
	}
	for u := int32(10); u < 16; u++ {
		r2 = append(r2, u)
	}
	rows = append(rows, r0, r1, r2)
	adj := &spmm.CSR{Rows: 300, Cols: 300, RowPtr: make([]int64, 301)}
	for v := range 300 {
		if v < len(rows) {
			adj.ColIdx = append(adj.ColIdx, rows[v]...)
		}
		adj.RowPtr[v+1] = int64(len(adj.ColIdx))
	}
	for _, c := range []struct {
		v        int32
		fanout   int
		steps    int
		subsets  bool
		maxStat  float64
		describe string
	}{
		{0, 5, 4000, false, chi2Crit(19), "degree 20, fanout 5"},
		{1, 40, 2000, false, chi2Crit(99), "degree 100, fanout 40"},
		{2, 3, 20000, true, chi2Crit(19), "degree 6, fanout 3, subsets"},
	} {
		t.Run(c.describe, func(t *testing.T) {
			s := NewNeighborSampler(adj, []int{c.fanout}, NeighborOptions{Threads: 1})
			defer s.Close()
			nb := adjRow(adj, c.v)
			d, k := len(nb), c.fanout
			incl := map[int32]int{}
			subsets := map[string]int{}
			var out MFGs
			for step := range c.steps {
				s.SampleInto(&out, []int32{c.v}, Key{Seed: 2024, Step: step})
				set := sampledSets(&out)[[2]int32{0, c.v}]
				for _, u := range set {
					incl[u]++
				}
				subsets[fmt.Sprint(set)]++
			}
			var stat float64
			if c.subsets {
				cells := 20 // C(6, 3)
				if len(subsets) != cells {
					t.Fatalf("%d distinct subsets drawn, want all %d", len(subsets), cells)
				}
				e := float64(c.steps) / float64(cells)
				for _, o := range subsets {
					stat += (float64(o) - e) * (float64(o) - e) / e
				}
			} else {
				p := float64(k) / float64(d)
				e := float64(c.steps) * p
				for _, u := range nb {
					o := float64(incl[u])
					stat += (o - e) * (o - e)
				}
				stat *= float64(d-1) / (float64(d) * float64(c.steps) * p * (1 - p))
			}
			t.Logf("χ² = %.2f (1e-3 critical value %.2f)", stat, c.maxStat)
			if stat > c.maxStat {
				t.Fatalf("χ² = %.2f above the 1e-3 critical value %.2f: the draws are not uniform", stat, c.maxStat)
			}
		})
	}
}

// TestNeighborSamplerGCNWeights: GCNWeights gives entry (i, j)
// 1/sqrt((d_i+1)(c_j+1)) and the self term 1/sqrt((d_i+1)(c_i+1)),
// recomputed here from the sampled sets, and MeanWeights restores what
// the sampler wrote.
func TestNeighborSamplerGCNWeights(t *testing.T) {
	adj := neighborGraph(1000, 5)
	s := NewNeighborSampler(adj, []int{5, 3}, NeighborOptions{})
	defer s.Close()
	var out MFGs
	s.SampleInto(&out, []int32{0, 5, 9, 33}, Key{Seed: 3})
	for l := range out.Layers {
		m := &out.Layers[l]
		mean := slices.Clone(m.A.Val)
		self := m.GCNWeights(nil)
		cnt := map[int32]int{}
		for _, c := range m.A.ColIdx {
			cnt[c]++
		}
		for i := 0; i < m.A.Rows; i++ {
			di := float64(m.A.RowPtr[i+1]-m.A.RowPtr[i]) + 1
			for e := m.A.RowPtr[i]; e < m.A.RowPtr[i+1]; e++ {
				want := 1 / math.Sqrt(di*float64(cnt[m.A.ColIdx[e]]+1))
				if math.Abs(float64(m.A.Val[e])-want) > 1e-7 {
					t.Fatalf("layer %d, row %d: weight %g, want %g", l, i, m.A.Val[e], want)
				}
			}
			if want := 1 / math.Sqrt(di*float64(cnt[int32(i)]+1)); math.Abs(float64(self[i])-want) > 1e-7 {
				t.Fatalf("layer %d, row %d: self weight %g, want %g", l, i, self[i], want)
			}
		}
		m.MeanWeights()
		if !slices.Equal(mean, m.A.Val) {
			t.Fatalf("layer %d: MeanWeights does not restore the sampler's weights", l)
		}
	}
}

// TestNeighborSamplerAllocs: after the steps have been sampled once, both
// samplers resample them into the same MFGs without allocating, serial,
// on the worker pool and relabelling through a hash map.
func TestNeighborSamplerAllocs(t *testing.T) {
	adj := neighborGraph(5000, 6)
	for _, opts := range []NeighborOptions{{Threads: 1}, {Threads: 2}, {Threads: 1, HashRelabel: true}} {
		s := NewNeighborSampler(adj, []int{15, 10, 5}, opts)
		var seeds [4][]int32
		for i := range seeds {
			seeds[i] = Uniform(1, 0, i, adj.Rows, 256)
		}
		var out MFGs
		step := 0
		run := func() {
			i := step % len(seeds)
			s.SampleInto(&out, seeds[i], Key{Seed: 1, Step: i})
			s.SampleUnfusedInto(&out, seeds[i], Key{Seed: 1, Step: i})
			step++
		}
		for range len(seeds) {
			run()
		}
		if allocs := testing.AllocsPerRun(4*len(seeds), run); allocs != 0 {
			t.Errorf("%+v: %v allocations per step after warm-up, want 0", opts, allocs)
		}
		s.Close()
	}
}

// TestNeighborSamplerMisuse: bad fanouts and seeds out of range or
// repeated panic with a *UsageError that names them.
func TestNeighborSamplerMisuse(t *testing.T) {
	adj := neighborGraph(100, 7)
	var out MFGs
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"no fanouts", func() { NewNeighborSampler(adj, nil, NeighborOptions{}) }},
		{"fanout 0", func() { NewNeighborSampler(adj, []int{5, 0}, NeighborOptions{}) }},
		{"seed out of range", func() {
			NewNeighborSampler(adj, []int{5}, NeighborOptions{}).SampleInto(&out, []int32{3, 100}, Key{})
		}},
		{"negative seed, unfused", func() {
			NewNeighborSampler(adj, []int{5}, NeighborOptions{}).SampleUnfusedInto(&out, []int32{-1}, Key{})
		}},
		{"repeated seed", func() {
			NewNeighborSampler(adj, []int{5}, NeighborOptions{}).SampleInto(&out, []int32{3, 4, 3}, Key{})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				v := recover()
				err, ok := v.(error)
				var ue *UsageError
				if !ok || !errors.As(err, &ue) {
					t.Fatalf("panicked with %v, want a *UsageError", v)
				}
				t.Log(ue)
			}()
			c.f()
		})
	}
}

// TestNeighborSamplerNoSeeds: a step without seeds has empty MFGs, and the
// storage that held a larger step is emptied, not read.
func TestNeighborSamplerNoSeeds(t *testing.T) {
	adj := neighborGraph(100, 8)
	s := NewNeighborSampler(adj, []int{4, 2}, NeighborOptions{})
	defer s.Close()
	var out MFGs
	s.SampleInto(&out, []int32{5, 6}, Key{})
	for _, sample := range []func(*MFGs, []int32, Key){s.SampleInto, s.SampleUnfusedInto} {
		sample(&out, nil, Key{Step: 1})
		checkMFGs(t, adj, []int{4, 2}, nil, &out)
		if len(out.Input()) != 0 || out.Layers[0].A.NNZ() != 0 {
			t.Fatalf("no seeds gave %d input vertices and %d edges", len(out.Input()), out.Layers[0].A.NNZ())
		}
	}
}
