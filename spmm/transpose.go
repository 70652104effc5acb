package spmm

import (
	"scalegnn/internal/hugepage"
	"sort"

	"scalegnn/internal/par"
)

// Transpose returns aᵀ as a new CSR matrix (TransposeInto on GOMAXPROCS
// goroutines into arrays allocated here). The backward pass of a GCN layer
// multiplies by the transpose of each adjacency shard; storing it once is
// cheaper than a scattered product every step.
func Transpose(a *CSR) *CSR {
	nnz := a.NNZ()
	t := &CSR{RowPtr: hugepage.Make[int64](a.Cols + 1), ColIdx: hugepage.Make[int32](int(nnz)), Val: hugepage.Make[float32](int(nnz))}
	TransposeInto(t, a, 0)
	return t
}

// transposeTileBytes is how much output one column tile of TransposeInto
// writes (column indices and values): a tile's output stays in the last
// level cache while every row of a visits the tile, so each scattered write
// hits a line already in cache instead of missing to memory. Smaller tiles
// cost a pass over the rows each: on this 2-core EPYC (2M×2M, 24M nonzeros,
// 1 thread, a loaded machine) 1 MiB tiles took 11.3 s, 16 MiB 2.5 s, the
// untiled counting sort 4.2 s. Tests shrink it to force many tiles.
var transposeTileBytes = 16 << 20

// minParallelTranspose is the nonzero count below which TransposeInto runs
// on the calling goroutine.
const minParallelTranspose = 1 << 18

// TransposeInto writes aᵀ into t, whose arrays the caller allocated:
// t.RowPtr of a.Cols+1 entries, t.ColIdx and t.Val of a.NNZ() entries each
// (their contents are overwritten; other sizes panic with a ShapeError).
// t.Rows and t.Cols are set. The result is the counting sort of a's
// entries by column, rows ascending within each column: identical to
// Transpose's, whatever the thread count.
//
// It runs on up to threads goroutines (threads <= 0 means GOMAXPROCS),
// each owning a range of columns of about equal nonzeros (rows of the
// result). Within its range a goroutine works tile by tile: a tile is a
// range of columns whose output fits in cache (transposeTileBytes), and
// each row of a hands the tile the run of its sorted columns that falls in
// it. A plain counting sort scatters every entry to a random place in the
// whole output, a cache miss per entry on a shard of hundreds of MB;
// tiling makes those writes hit cache at the price of one pass per tile
// over a cursor per row (4 bytes per row of a, per goroutine).
func TransposeInto(t, a *CSR, threads int) {
	nnz := a.NNZ()
	if len(t.RowPtr) != a.Cols+1 || len(t.ColIdx) != nnz || len(t.Val) != nnz {
		shapePanic("TransposeInto: %d row pointers, %d column indices, %d values for the transpose of a %d×%d matrix with %d nonzeros",
			len(t.RowPtr), len(t.ColIdx), len(t.Val), a.Rows, a.Cols, nnz)
	}
	parts := workers(threads)
	if nnz < minParallelTranspose {
		parts = 1
	}
	transposeIntoParts(t, a, parts)
}

// transposeIntoParts is TransposeInto on parts goroutines.
func transposeIntoParts(t, a *CSR, parts int) {
	nnz := a.NNZ()
	t.Rows, t.Cols = a.Cols, a.Rows
	ptr := t.RowPtr
	// Count each column's entries into ptr[c+1], then sum: ptr[c] is where
	// column c starts in the result.
	clear(ptr)
	for _, c := range a.ColIdx[:nnz] {
		ptr[c+1]++
	}
	for c := range a.Cols {
		ptr[c+1] += ptr[c]
	}
	// Column ranges of about equal nonzeros: ptr is the cost of columns
	// [0, c), so each boundary is a binary search.
	bounds := make([]int, parts+1)
	bounds[parts] = a.Cols
	for p := 1; p < parts; p++ {
		target := int64(nnz) * int64(p) / int64(parts)
		bounds[p] = bounds[p-1] + sort.Search(a.Cols-bounds[p-1], func(i int) bool { return ptr[bounds[p-1]+i] >= target })
	}
	// Every goroutine scatters with ptr[c] as column c's cursor, so that no
	// second array of cursors is needed: afterwards ptr[c] is where column
	// c ends, and the shift below restores the starts.
	var g par.Group
	for p := range parts {
		c0, c1 := bounds[p], bounds[p+1]
		if c0 == c1 {
			continue
		}
		run := func() { transposeRange(t, a, c0, c1) }
		if p == parts-1 {
			g.Run(run)
		} else {
			g.Go(run)
		}
	}
	g.Wait()
	copy(ptr[1:], ptr[:a.Cols])
	ptr[0] = 0
}

// transposeRange scatters the entries of a in columns [c0, c1) to their
// places in t, tile by tile. t.RowPtr[c] is column c's cursor.
func transposeRange(t, a *CSR, c0, c1 int) {
	ptr := t.RowPtr
	// pos[i] is where row i's entries at or after the current tile start,
	// as an offset from a.RowPtr[i] (a row has fewer than 2³² entries: its
	// columns are distinct int32s).
	pos := make([]uint32, a.Rows)
	if c0 > 0 {
		for i := range a.Rows {
			cols := a.ColIdx[a.RowPtr[i]:a.RowPtr[i+1]]
			pos[i] = uint32(sort.Search(len(cols), func(k int) bool { return cols[k] >= int32(c0) }))
		}
	}
	// A tile holds whole columns up to transposeTileBytes of output (8
	// bytes an entry), at least one column.
	perTile := int64(transposeTileBytes / 8)
	for lo := c0; lo < c1; {
		hi := lo + 1 + sort.Search(c1-lo-1, func(i int) bool { return ptr[lo+1+i]-ptr[lo] > perTile })
		end := int32(hi)
		for i := range a.Rows {
			s, e := a.RowPtr[i]+int64(pos[i]), a.RowPtr[i+1]
			p := s
			for ; p < e && a.ColIdx[p] < end; p++ {
				c := a.ColIdx[p]
				q := ptr[c]
				ptr[c] = q + 1
				t.ColIdx[q] = int32(i)
				t.Val[q] = a.Val[p]
			}
			pos[i] += uint32(p - s)
		}
		lo = hi
	}
}

// TransposePerm returns the transpose of a's pattern and, for each of
// its entries, the position of the same entry in a: t's entry q is a's
// entry perm[q]. Values are copied too. Per-entry arrays indexed like a
// (a GAT layer's attention coefficients) are then read through perm when
// multiplying by the transpose, with no second copy of the array. Within
// a row of t the entries keep a's row order, so the result is
// deterministic.
func TransposePerm(a *CSR) (*CSR, []int32) {
	nnz := a.NNZ()
	t := &CSR{Rows: a.Cols, Cols: a.Rows, RowPtr: make([]int64, a.Cols+1), ColIdx: make([]int32, nnz), Val: make([]float32, nnz)}
	perm := make([]int32, nnz)
	TransposePermInto(t, perm, a)
	return t, perm
}

// TransposePermInto is TransposePerm into t's and perm's storage, which
// must have the transpose's sizes.
func TransposePermInto(t *CSR, perm []int32, a *CSR) {
	nnz := a.NNZ()
	if len(t.RowPtr) != a.Cols+1 || len(t.ColIdx) != nnz || len(t.Val) != nnz || len(perm) != nnz {
		shapePanic("TransposePermInto: %d row pointers, %d column indices, %d values, %d positions for the transpose of a %d×%d matrix with %d nonzeros",
			len(t.RowPtr), len(t.ColIdx), len(t.Val), len(perm), a.Rows, a.Cols, nnz)
	}
	t.Rows, t.Cols = a.Cols, a.Rows
	clear(t.RowPtr)
	for p := range nnz {
		t.RowPtr[a.ColIdx[p]+1]++
	}
	for j := range a.Cols {
		t.RowPtr[j+1] += t.RowPtr[j]
	}
	// next[j] is t.RowPtr[j] advanced as row j fills; it reuses RowPtr
	// shifted by one and is restored at the end.
	for i := range a.Rows {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := a.ColIdx[p]
			q := t.RowPtr[j]
			t.ColIdx[q] = int32(i)
			t.Val[q] = a.Val[p]
			perm[q] = int32(p)
			t.RowPtr[j]++
		}
	}
	for j := a.Cols; j > 0; j-- {
		t.RowPtr[j] = t.RowPtr[j-1]
	}
	t.RowPtr[0] = 0
}

// TransposePositions fills perm (length a.NNZ()) with the position in a of
// each entry of at, a's transpose as Transpose or TransposePerm make it
// (each row of at lists a's rows in increasing order): what TransposePerm
// returns, for a transpose made elsewhere. next is scratch of at least
// a.Cols elements, so that a caller refilling perm every step allocates
// nothing. It panics if at is not that transpose.
func TransposePositions(perm []int32, next []int64, a, at *CSR) {
	nnz := a.NNZ()
	if at.Rows != a.Cols || at.Cols != a.Rows || at.NNZ() != nnz || len(perm) != nnz || len(next) < a.Cols {
		shapePanic("TransposePositions: %d positions for a %d×%d matrix with %d nonzeros and a %d×%d transpose with %d",
			len(perm), a.Rows, a.Cols, nnz, at.Rows, at.Cols, at.NNZ())
	}
	copy(next, at.RowPtr[:a.Cols])
	for i := range a.Rows {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := a.ColIdx[p]
			q := next[j]
			if q >= at.RowPtr[j+1] || at.ColIdx[q] != int32(i) {
				shapePanic("TransposePositions: entry (%d, %d) is not where the transpose keeps it", i, j)
			}
			perm[q] = int32(p)
			next[j]++
		}
	}
}
