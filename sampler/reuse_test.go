package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"scalegnn/spmm"
)

// uniformAllocating is Uniform as it was before UniformInto: a new
// generator, set and sample per call. The reused-storage path must draw
// exactly what it drew.
func uniformAllocating(seed uint64, group, step, n, b int) []int32 {
	out := make([]int32, 0, b)
	if b == n {
		for v := 0; v < n; v++ {
			out = append(out, int32(v))
		}
		return out
	}
	rng := rand.New(rand.NewPCG(mixSeed(seed, uint64(group)), mixSeed(uint64(step), 0x5ca1e)))
	seen := map[int32]bool{}
	for j := n - b; j < n; j++ {
		t := int32(rng.IntN(j + 1))
		if seen[t] {
			t = int32(j)
		}
		seen[t] = true
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// TestUniformIntoIsUniform: one scratch and one destination reused over
// draws of growing and shrinking size give the samples of the allocating
// definition, vertex for vertex.
func TestUniformIntoIsUniform(t *testing.T) {
	var scratch UniformScratch
	dst := make([]int32, 5000)
	for i, c := range []struct{ n, b int }{{10, 10}, {1000, 999}, {1000, 3}, {100000, 5000}, {60, 13}, {100000, 5000}, {1, 1}, {10, 0}, {7000, 2500}} {
		for step := 0; step < 4; step++ {
			got := UniformInto(dst, &scratch, 11, i%3, step, c.n, c.b)
			want := uniformAllocating(11, i%3, step, c.n, c.b)
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d b=%d step %d: UniformInto differs from the allocating draw", c.n, c.b, step)
			}
			if !slices.Equal(Uniform(11, i%3, step, c.n, c.b), want) {
				t.Fatalf("n=%d b=%d step %d: Uniform differs from the allocating draw", c.n, c.b, step)
			}
		}
	}
}

func TestUniformIntoShortDestinationPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("UniformInto of 5 vertices into 4 did not panic")
		}
	}()
	UniformInto(make([]int32, 4), new(UniformScratch), 1, 0, 0, 10, 5)
}

// TestPositionsIntoAndBoundsInto match the allocating forms, and with the
// identity order PositionsInto copies the sample instead of aliasing it.
func TestPositionsIntoAndBoundsInto(t *testing.T) {
	verts := []int32{1, 4, 5, 8}
	inv := []int32{9, 0, 2, 3, 7, 1, 4, 5, 6, 8}
	dst := make([]int32, 6)
	if got := PositionsInto(dst, verts, inv); !slices.Equal(got, Positions(verts, inv)) || &got[0] != &dst[0] {
		t.Fatalf("PositionsInto = %v, want %v in dst", got, Positions(verts, inv))
	}
	got := PositionsInto(dst, verts, nil)
	if !slices.Equal(got, verts) || &got[0] == &verts[0] {
		t.Fatalf("PositionsInto with the identity = %v, want a copy of %v", got, verts)
	}
	block := func(i int) (int, int) { return []int{0, 4, 7}[i], []int{4, 7, 10}[i] }
	pos := Positions(verts, inv)
	b := make([]int, 4)
	if got := BoundsInto(b, pos, 3, block); !slices.Equal(got, Bounds(pos, 3, block)) || &got[0] != &b[0] {
		t.Fatalf("BoundsInto = %v, want %v in dst", got, Bounds(pos, 3, block))
	}
}

// extractAllocating is Extract as it was before ExtractInto, building new
// blocks with a dense column map; the reused-storage path must produce the
// same arrays.
func extractAllocating(src *spmm.CSR, r0, c0 int, rows, cols, rowVerts, colVerts []int32, p float64, transpose bool) (a, at *spmm.CSR) {
	index := map[int32]int32{}
	for j, c := range cols {
		index[c-int32(c0)] = int32(j)
	}
	scale := float32(1)
	if p > 0 {
		scale = float32(1 / p)
	}
	a = &spmm.CSR{Rows: len(rows), Cols: len(cols), RowPtr: make([]int64, len(rows)+1)}
	for i, r := range rows {
		lr := int(r) - r0
		for k := src.RowPtr[lr]; k < src.RowPtr[lr+1]; k++ {
			j, ok := index[src.ColIdx[k]]
			if !ok {
				continue
			}
			v := src.Val[k]
			if rowVerts[i] != colVerts[j] {
				v *= scale
			}
			a.ColIdx = append(a.ColIdx, j)
			a.Val = append(a.Val, v)
		}
		a.RowPtr[i+1] = int64(len(a.ColIdx))
	}
	if transpose {
		at = spmm.Transpose(a)
	}
	return a, at
}

// sameBits reports the first difference between two CSRs, values compared
// bit for bit.
func sameBits(got, want *spmm.CSR) error {
	switch {
	case got.Rows != want.Rows || got.Cols != want.Cols:
		return fmt.Errorf("%d×%d, want %d×%d", got.Rows, got.Cols, want.Rows, want.Cols)
	case !slices.Equal(got.RowPtr, want.RowPtr):
		return fmt.Errorf("row pointers differ")
	case !slices.Equal(got.ColIdx, want.ColIdx):
		return fmt.Errorf("column indices differ")
	}
	for k := range got.Val {
		if math.Float32bits(got.Val[k]) != math.Float32bits(want.Val[k]) {
			return fmt.Errorf("value %d is %g, want %g", k, got.Val[k], want.Val[k])
		}
	}
	return nil
}

// sampleShard returns the members of a sample s inside [lo, hi).
func sampleShard(s []int32, lo, hi int) []int32 {
	i, _ := slices.BinarySearch(s, int32(lo))
	j, _ := slices.BinarySearch(s, int32(hi))
	return s[i:j]
}

// TestExtractIntoIsExtract: one pair of blocks reused over batches of
// varying size (so the arrays both grow and shrink) holds, each time, the
// arrays the allocating definition builds, transpose included.
func TestExtractIntoIsExtract(t *testing.T) {
	const n, r0, r1, c0, c1 = 300, 40, 250, 0, 180
	full := randomCSR(2, n, 10)
	var ri, ci []int32
	var val []float32
	for i := r0; i < r1; i++ {
		for k := full.RowPtr[i]; k < full.RowPtr[i+1]; k++ {
			if j := int(full.ColIdx[k]); j >= c0 && j < c1 {
				ri, ci, val = append(ri, int32(i-r0)), append(ci, int32(j-c0)), append(val, full.Val[k])
			}
		}
	}
	shard := spmm.FromCOO(r1-r0, c1-c0, ri, ci, val)
	ex := NewExtractor(shard, r0, c0)
	a, at := new(spmm.CSR), new(spmm.CSR)
	for step, b := range []int{20, 150, 60, 300, 5, 299, 1, 120} {
		s := Uniform(6, 1, step, n, b)
		p := InclusionProbability(n, b)
		rows, cols := sampleShard(s, r0, r1), sampleShard(s, c0, c1)
		for _, transpose := range []bool{false, true} {
			wa, wat := extractAllocating(shard, r0, c0, rows, cols, rows, cols, p, transpose)
			var dt *spmm.CSR
			if transpose {
				dt = at
			}
			ex.ExtractInto(a, dt, rows, cols, rows, cols, p)
			if err := sameBits(a, wa); err != nil {
				t.Fatalf("b=%d transpose=%v: block %v", b, transpose, err)
			}
			if transpose {
				if err := sameBits(at, wat); err != nil {
					t.Fatalf("b=%d: transpose %v", b, err)
				}
			}
			ga, gat := ex.Extract(rows, cols, rows, cols, p, transpose)
			if err := sameBits(ga, wa); err != nil {
				t.Fatalf("b=%d transpose=%v: Extract's block %v", b, transpose, err)
			}
			if (gat != nil) != transpose || transpose && sameBits(gat, wat) != nil {
				t.Fatalf("b=%d transpose=%v: Extract's transpose differs", b, transpose)
			}
		}
	}
}

// TestSteadyStateSamplingAllocatesNothing: once its storage has seen the
// batches of a cycle of steps, drawing, positioning, bounding and
// extracting them again allocates nothing.
func TestSteadyStateSamplingAllocatesNothing(t *testing.T) {
	const n, b, steps = 400, 90, 8
	full := randomCSR(3, n, 12)
	ex := NewExtractor(full, 0, 0)
	inv := make([]int32, n)
	for i := range inv {
		inv[i] = int32(n - 1 - i)
	}
	var scratch UniformScratch
	verts, pos, bounds := make([]int32, b), make([]int32, b), make([]int, 5)
	a, at := new(spmm.CSR), new(spmm.CSR)
	p := InclusionProbability(n, b)
	step := 0
	run := func() {
		s := UniformInto(verts, &scratch, 5, 0, step%steps, n, b)
		ps := PositionsInto(pos, s, inv)
		BoundsInto(bounds, ps, 4, func(i int) (int, int) { return i * n / 4, (i + 1) * n / 4 })
		ex.ExtractInto(a, at, s, s, s, s, p)
		step++
	}
	for range steps {
		run()
	}
	if allocs := testing.AllocsPerRun(3*steps, run); allocs != 0 {
		t.Errorf("a steady-state sampling step allocates %v times, want 0", allocs)
	}
}
