package sampler

import (
	"fmt"

	"scalegnn/spmm"
)

// Extractor cuts mini-batch blocks out of one CSR shard: the block of the
// adjacency with global rows [R0, R0+A.Rows) and columns [C0, C0+A.Cols).
// It keeps a column map tagged with a generation counter, so a new sample
// costs O(sampled columns), not O(A.Cols), to mark (Algorithm 2's
// TAGREMAP). An Extractor is not safe for concurrent use; one per shard and
// one batch at a time.
type Extractor struct {
	A      *spmm.CSR
	R0, C0 int

	gen  uint32
	mark []colMark // per local column
	next []int64   // the transpose's fill pointer per sampled column
}

// colMark is one column's entry of the tagged map: the column is sampled
// in the current batch when gen equals the Extractor's generation, and idx
// is then its compact index. Tag and index share a cache line, since the
// row scan reads both at random columns.
type colMark struct {
	gen uint32
	idx int32
}

// NewExtractor returns an Extractor over a, whose first row and column are
// at global positions r0 and c0.
func NewExtractor(a *spmm.CSR, r0, c0 int) *Extractor {
	return &Extractor{A: a, R0: r0, C0: c0, mark: make([]colMark, a.Cols)}
}

// Extract returns the block of the induced subgraph: rows at the sorted
// global positions rows and columns at the sorted global positions cols,
// both inside the shard, renumbered 0, 1, ... in that order. Every value is
// divided by p except on the diagonal, where the row's vertex rowVerts[i]
// equals the column's vertex colVerts[j] (self-loops are always sampled
// with their vertex). With transpose set it also returns the transposed
// block, built from the same entries. The blocks are new; ExtractInto
// writes into reused ones.
func (e *Extractor) Extract(rows, cols, rowVerts, colVerts []int32, p float64, transpose bool) (a, at *spmm.CSR) {
	a = new(spmm.CSR)
	// Expected entries: the sampled rows' share of the nonzeros times the
	// sampled columns' share, with some slack against reallocation.
	if e.A.Rows > 0 && e.A.Cols > 0 {
		est := e.Estimate(len(rows), len(cols))
		a.ColIdx, a.Val = make([]int32, 0, est), make([]float32, 0, est)
	}
	if transpose {
		at = new(spmm.CSR)
	}
	e.ExtractInto(a, at, rows, cols, rowVerts, colVerts, p)
	return a, at
}

// Estimate returns a capacity for the entries of a block of rows×cols
// sampled uniformly from the shard, with a quarter of slack so that
// storage sized by it rarely grows: an entry off the diagonal is kept when
// both its row and its column are sampled (the rows' share of the nonzeros
// times the columns' share), a self-loop whenever its vertex is, so up to
// min(rows, cols) more.
func (e *Extractor) Estimate(rows, cols int) int {
	src := e.A
	if src.Rows == 0 || src.Cols == 0 {
		return 0
	}
	est := float64(src.NNZ())*float64(rows)/float64(src.Rows)*float64(cols)/float64(src.Cols) + float64(min(rows, cols))
	return min(int(1.25*est)+16, int(src.NNZ()))
}

// ExtractInto is Extract writing the block into a and, unless at is nil,
// its transpose into at: the same entries in the same order as Extract's.
// Both reuse their arrays' capacity and grow (with slack) only when a
// block is larger than any before, so a steady state allocates nothing.
func (e *Extractor) ExtractInto(a, at *spmm.CSR, rows, cols, rowVerts, colVerts []int32, p float64) {
	if len(rowVerts) != len(rows) || len(colVerts) != len(cols) {
		panic(fmt.Sprintf("sampler: Extract with %d rows and %d row vertices, %d columns and %d column vertices",
			len(rows), len(rowVerts), len(cols), len(colVerts)))
	}
	if a == nil || a == at {
		panic("sampler: ExtractInto needs a block distinct from its transpose")
	}
	e.gen++
	if e.gen == 0 { // wrapped: forget every old tag
		clear(e.mark)
		e.gen = 1
	}
	for j, c := range cols {
		lc := int(c) - e.C0
		if lc < 0 || lc >= e.A.Cols {
			panic(fmt.Sprintf("sampler: column %d outside the shard's [%d, %d)", c, e.C0, e.C0+e.A.Cols))
		}
		e.mark[lc] = colMark{e.gen, int32(j)}
	}
	scale := float32(1)
	if p > 0 {
		scale = float32(1 / p)
	}

	src := e.A
	transpose := at != nil
	a.Rows, a.Cols = len(rows), len(cols)
	a.RowPtr = resize(a.RowPtr, len(rows)+1)
	a.RowPtr[0] = 0
	// Appending to the emptied arrays grows them geometrically when a
	// block is larger than their capacity.
	a.ColIdx, a.Val = a.ColIdx[:0], a.Val[:0]
	var colCount []int64
	if transpose {
		at.RowPtr = resize(at.RowPtr, len(cols)+1)
		colCount = at.RowPtr
		clear(colCount)
	}
	for i, r := range rows {
		lr := int(r) - e.R0
		if lr < 0 || lr >= src.Rows {
			panic(fmt.Sprintf("sampler: row %d outside the shard's [%d, %d)", r, e.R0, e.R0+src.Rows))
		}
		for k := src.RowPtr[lr]; k < src.RowPtr[lr+1]; k++ {
			mk := e.mark[src.ColIdx[k]]
			if mk.gen != e.gen {
				continue
			}
			j := mk.idx
			v := src.Val[k]
			if rowVerts[i] != colVerts[j] {
				v *= scale
			}
			// Compact indices keep the shard's column order, so rows stay
			// sorted.
			a.ColIdx = append(a.ColIdx, j)
			a.Val = append(a.Val, v)
			if transpose {
				colCount[j+1]++
			}
		}
		a.RowPtr[i+1] = int64(len(a.ColIdx))
	}
	if !transpose {
		return
	}
	// Counting sort by column: the running counts are the transpose's row
	// pointers, and rows arrive in increasing order, so each transposed
	// row comes out sorted.
	for j := 1; j <= len(cols); j++ {
		colCount[j] += colCount[j-1]
	}
	at.Rows, at.Cols = len(cols), len(rows)
	at.ColIdx, at.Val = resize(at.ColIdx, len(a.ColIdx)), resize(at.Val, len(a.Val))
	e.next = resize(e.next, len(cols))
	next := e.next
	copy(next, colCount[:len(cols)])
	for i := 0; i < a.Rows; i++ {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			j := a.ColIdx[k]
			at.ColIdx[next[j]] = int32(i)
			at.Val[next[j]] = a.Val[k]
			next[j]++
		}
	}
}

// resize returns s with length n, reusing its array when it holds n and
// otherwise allocating a quarter more than n, so that slowly growing
// sizes settle after a few reallocations. The contents are not kept.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n, n+n/4)
}
