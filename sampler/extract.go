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
// block, built from the same entries.
func (e *Extractor) Extract(rows, cols, rowVerts, colVerts []int32, p float64, transpose bool) (a, at *spmm.CSR) {
	if len(rowVerts) != len(rows) || len(colVerts) != len(cols) {
		panic(fmt.Sprintf("sampler: Extract with %d rows and %d row vertices, %d columns and %d column vertices",
			len(rows), len(rowVerts), len(cols), len(colVerts)))
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
	a = &spmm.CSR{Rows: len(rows), Cols: len(cols), RowPtr: make([]int64, len(rows)+1)}
	// Expected entries: the sampled rows' share of the nonzeros times the
	// sampled columns' share, with some slack against reallocation.
	if src.Rows > 0 && src.Cols > 0 {
		est := float64(src.NNZ()) * float64(len(rows)) / float64(src.Rows) * float64(len(cols)) / float64(src.Cols)
		a.ColIdx = make([]int32, 0, int(1.2*est)+16)
		a.Val = make([]float32, 0, int(1.2*est)+16)
	}
	var colCount []int64
	if transpose {
		colCount = make([]int64, len(cols)+1)
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
		return a, nil
	}
	// Counting sort by column: the running counts are the transpose's row
	// pointers, and rows arrive in increasing order, so each transposed
	// row comes out sorted.
	for j := 1; j <= len(cols); j++ {
		colCount[j] += colCount[j-1]
	}
	at = &spmm.CSR{Rows: len(cols), Cols: len(rows), RowPtr: colCount,
		ColIdx: make([]int32, len(a.ColIdx)), Val: make([]float32, len(a.Val))}
	next := make([]int64, len(cols))
	copy(next, colCount[:len(cols)])
	for i := 0; i < a.Rows; i++ {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			j := a.ColIdx[k]
			at.ColIdx[next[j]] = int32(i)
			at.Val[next[j]] = a.Val[k]
			next[j]++
		}
	}
	return a, at
}
