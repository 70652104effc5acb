package spmm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// transposeRef is the plain counting-sort transpose TransposeInto must
// equal bit for bit: one pass over a in row order, every entry scattered
// to its column's next free place.
func transposeRef(a *CSR) *CSR {
	nnz := a.NNZ()
	t := &CSR{RowPtr: make([]int64, a.Cols+1), ColIdx: make([]int32, nnz), Val: make([]float32, nnz)}
	transposeRefInto(t, a)
	return t
}

func transposeRefInto(t, a *CSR) {
	t.Rows, t.Cols = a.Cols, a.Rows
	clear(t.RowPtr)
	for _, c := range a.ColIdx[:a.NNZ()] {
		t.RowPtr[c+1]++
	}
	for j := range a.Cols {
		t.RowPtr[j+1] += t.RowPtr[j]
	}
	next := slices.Clone(t.RowPtr[:a.Cols])
	for i := range a.Rows {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			q := next[a.ColIdx[p]]
			next[a.ColIdx[p]]++
			t.ColIdx[q], t.Val[q] = int32(i), a.Val[p]
		}
	}
}

// randomCSR is a rows×cols matrix with about deg entries per row, some
// rows empty, a few dense, and distinct values (so that a misplaced value
// is seen).
func randomCSR(r *rand.Rand, rows, cols, deg int) *CSR {
	var ri, ci []int32
	var v []float32
	for i := range rows {
		n := r.IntN(2*deg + 1)
		if r.IntN(50) == 0 {
			n = cols // a hub row
		}
		if r.IntN(5) == 0 {
			n = 0
		}
		for range n {
			ri = append(ri, int32(i))
			ci = append(ci, int32(r.IntN(cols)))
			v = append(v, float32(len(v)+1))
		}
	}
	return FromCOO(rows, cols, ri, ci, v)
}

func equalCSR(t *testing.T, got, want *CSR) {
	t.Helper()
	if got.Rows != want.Rows || got.Cols != want.Cols || !slices.Equal(got.RowPtr, want.RowPtr) ||
		!slices.Equal(got.ColIdx, want.ColIdx) || !slices.Equal(got.Val, want.Val) {
		t.Fatalf("transpose differs from the reference: %d×%d, ptr %v, idx %v, val %v; want %d×%d, ptr %v, idx %v, val %v",
			got.Rows, got.Cols, head(got.RowPtr), head(got.ColIdx), head(got.Val),
			want.Rows, want.Cols, head(want.RowPtr), head(want.ColIdx), head(want.Val))
	}
}

func head[T any](x []T) []T { return x[:min(len(x), 12)] }

// TestTransposeInto checks TransposeInto against the reference, bit for
// bit, over shapes (empty, one row, one column, wide, tall), thread counts
// (ranges with no columns included) and tile sizes down to one column per
// tile, into destinations holding garbage.
func TestTransposeInto(t *testing.T) {
	defer func(b int) { transposeTileBytes = b }(transposeTileBytes)
	r := rand.New(rand.NewPCG(11, 3))
	for _, tc := range []struct{ rows, cols, deg int }{
		{0, 0, 0}, {0, 5, 0}, {5, 0, 0}, {1, 1, 1}, {1, 40, 8}, {40, 1, 1},
		{7, 300, 5}, {300, 7, 2}, {257, 263, 6}, {2000, 1500, 9},
	} {
		a := randomCSR(r, tc.rows, tc.cols, tc.deg)
		want := transposeRef(a)
		for _, tile := range []int{8, 64, 1 << 20} {
			for _, threads := range []int{1, 2, 3, 7} {
				t.Run(fmt.Sprintf("%dx%d/nnz=%d/tile=%d/threads=%d", tc.rows, tc.cols, a.NNZ(), tile, threads), func(t *testing.T) {
					transposeTileBytes = tile
					nnz := a.NNZ()
					got := &CSR{RowPtr: make([]int64, a.Cols+1), ColIdx: make([]int32, nnz), Val: make([]float32, nnz)}
					for i := range got.RowPtr {
						got.RowPtr[i] = -7
					}
					for i := range got.ColIdx {
						got.ColIdx[i], got.Val[i] = -1, -1
					}
					transposeIntoParts(got, a, threads)
					equalCSR(t, got, want)
					if err := got.Validate(); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
		if tc.rows > 0 && tc.cols > 0 {
			equalCSR(t, Transpose(Transpose(a)), a)
		}
	}
}

// TestTransposeIntoShape: destination arrays of the wrong size are the
// caller's mistake and panic with a ShapeError.
func TestTransposeIntoShape(t *testing.T) {
	a := randomCSR(rand.New(rand.NewPCG(1, 1)), 10, 12, 3)
	nnz := a.NNZ()
	for _, dst := range []*CSR{
		{RowPtr: make([]int64, 12), ColIdx: make([]int32, nnz), Val: make([]float32, nnz)},
		{RowPtr: make([]int64, 13), ColIdx: make([]int32, nnz+1), Val: make([]float32, nnz)},
		{RowPtr: make([]int64, 13), ColIdx: make([]int32, nnz), Val: make([]float32, nnz-1)},
	} {
		func() {
			defer func() {
				if _, ok := recover().(ShapeError); !ok {
					t.Errorf("%d/%d/%d arrays: no ShapeError panic", len(dst.RowPtr), len(dst.ColIdx), len(dst.Val))
				}
			}()
			TransposeInto(dst, a, 1)
		}()
	}
}

// BenchmarkTranspose compares the plain counting sort with TransposeInto
// on a shard-sized matrix (2M×2M, about 16 nonzeros a row, the size of a
// rank's shard of R-MAT scale 22 on 2×2×2), into a destination already in
// memory, so that the scatter is timed and not the page faults.
func BenchmarkTranspose(b *testing.B) {
	n := 1 << 21
	if testing.Short() {
		n = 1 << 16
	}
	r := rand.New(rand.NewPCG(5, 5))
	a := &CSR{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	for i := range n {
		a.RowPtr[i+1] = a.RowPtr[i] + int64(8+r.IntN(16))
	}
	a.ColIdx, a.Val = make([]int32, a.NNZ()), make([]float32, a.NNZ())
	for i := range n {
		lo, hi := a.RowPtr[i], a.RowPtr[i+1]
		step := n / int(hi-lo+1)
		c := r.IntN(step)
		for p := lo; p < hi; p++ {
			a.ColIdx[p], a.Val[p] = int32(c), float32(p)
			c += 1 + r.IntN(step)
		}
	}
	dst := Transpose(a)
	b.Run("reference", func(b *testing.B) {
		for range b.N {
			transposeRefInto(dst, a)
		}
	})
	for _, threads := range []int{1, 2} {
		for _, tile := range []int{1 << 20, 4 << 20, 16 << 20, 1 << 30} {
			b.Run(fmt.Sprintf("into/threads=%d/tile=%dMiB", threads, tile>>20), func(b *testing.B) {
				defer func(t int) { transposeTileBytes = t }(transposeTileBytes)
				transposeTileBytes = tile
				for range b.N {
					TransposeInto(dst, a, threads)
				}
			})
		}
	}
}
