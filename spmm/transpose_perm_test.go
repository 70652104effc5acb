package spmm_test

import (
	"math/rand/v2"
	"testing"

	"scalegnn/spmm"
)

func TestTransposePerm(t *testing.T) {
	for _, tc := range []struct{ rows, cols, nnzPerRow int }{{1, 1, 1}, {5, 3, 2}, {40, 70, 6}, {70, 40, 0}} {
		rng := rand.New(rand.NewPCG(1, uint64(tc.rows)))
		a := &spmm.CSR{Rows: tc.rows, Cols: tc.cols, RowPtr: make([]int64, tc.rows+1)}
		for i := range tc.rows {
			used := map[int32]bool{}
			for range tc.nnzPerRow {
				used[int32(rng.IntN(tc.cols))] = true
			}
			for j := range int32(tc.cols) {
				if used[j] {
					a.ColIdx = append(a.ColIdx, j)
					a.Val = append(a.Val, rng.Float32())
				}
			}
			a.RowPtr[i+1] = int64(len(a.ColIdx))
		}
		tr, perm := spmm.TransposePerm(a)
		want := spmm.Transpose(a)
		again := make([]int32, len(perm))
		spmm.TransposePositions(again, make([]int64, a.Cols), a, want)
		for q := range perm {
			if again[q] != perm[q] {
				t.Fatalf("%v: TransposePositions[%d] = %d, TransposePerm's %d", tc, q, again[q], perm[q])
			}
		}
		for j := range want.RowPtr {
			if tr.RowPtr[j] != want.RowPtr[j] {
				t.Fatalf("%v: row pointer %d = %d, want %d", tc, j, tr.RowPtr[j], want.RowPtr[j])
			}
		}
		for q := range want.ColIdx {
			if tr.ColIdx[q] != want.ColIdx[q] || tr.Val[q] != want.Val[q] {
				t.Fatalf("%v: entry %d = (%d, %g), want (%d, %g)", tc, q, tr.ColIdx[q], tr.Val[q], want.ColIdx[q], want.Val[q])
			}
			// Entry q of the transpose is (j, i): entry perm[q] of a is (i, j).
			p, i := int64(perm[q]), tr.ColIdx[q]
			if p < a.RowPtr[i] || p >= a.RowPtr[i+1] || a.Val[p] != tr.Val[q] {
				t.Fatalf("%v: perm[%d] = %d is not in row %d of a", tc, q, p, i)
			}
		}
	}
}
