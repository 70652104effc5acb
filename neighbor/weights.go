package neighbor

import (
	"scalegnn/internal/hugepage"
	"scalegnn/sampler"
	"scalegnn/spmm"
)

// gcnWeights writes into dst the GCN operator of one sampled layer (see
// the package comment): row i, destination v, holds the self loop Â_vv at
// local column i and each sampled neighbour u at Â_vu·d_v/|S(v)|, columns
// ascending. dst's storage is reused.
func gcnWeights(dst *spmm.CSR, m *sampler.MFG, g *Graph) {
	a := &m.A
	nnz := a.NNZ() + a.Rows
	dst.Rows, dst.Cols = a.Rows, a.Cols
	dst.RowPtr = resize(dst.RowPtr, a.Rows+1)
	dst.ColIdx = resize(dst.ColIdx, nnz)
	dst.Val = resize(dst.Val, nnz)
	w := int64(0)
	dst.RowPtr[0] = 0
	for i := 0; i < a.Rows; i++ {
		v := m.Src[i]
		lo, hi := a.RowPtr[i], a.RowPtr[i+1]
		scale := float64(g.Degree(v)) / float64(hi-lo)
		self := false
		put := func(c int32, x float32) {
			dst.ColIdx[w], dst.Val[w] = c, x
			w++
		}
		for p := lo; p < hi; p++ {
			c := a.ColIdx[p]
			if !self && c > int32(i) {
				put(int32(i), g.SelfW[v])
				self = true
			}
			put(c, float32(float64(g.weight(v, m.Src[c]))*scale))
		}
		if !self {
			put(int32(i), g.SelfW[v])
		}
		dst.RowPtr[i+1] = w
	}
}

// gatPattern writes into dst the attention pattern of one sampled layer:
// row i, destination v = Src[i], holds v's sampled neighbours and its
// self loop at local column i (destinations are the first sources),
// columns ascending, every value 1 (a GAT layer reads only the pattern).
// Every row has the self loop, so every softmax has an entry even for a
// vertex without neighbours. dst's storage is reused.
func gatPattern(dst *spmm.CSR, m *sampler.MFG) {
	a := &m.A
	nnz := a.NNZ() + a.Rows
	dst.Rows, dst.Cols = a.Rows, a.Cols
	dst.RowPtr = resize(dst.RowPtr, a.Rows+1)
	dst.ColIdx = resize(dst.ColIdx, nnz)
	dst.Val = resize(dst.Val, nnz)
	w := int64(0)
	dst.RowPtr[0] = 0
	for i := 0; i < a.Rows; i++ {
		self := false
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			c := a.ColIdx[p]
			if !self && c > int32(i) {
				dst.ColIdx[w] = int32(i)
				w++
				self = true
			}
			dst.ColIdx[w] = c
			w++
		}
		if !self {
			dst.ColIdx[w] = int32(i)
			w++
		}
		dst.RowPtr[i+1] = w
	}
	for p := range dst.Val {
		dst.Val[p] = 1
	}
}

// transposePermInto writes aᵀ into dst and into *perm the position in a
// of each of aᵀ's entries (spmm.TransposePermInto), reusing storage.
func transposePermInto(dst *spmm.CSR, perm *[]int32, a *spmm.CSR) {
	nnz := a.NNZ()
	dst.RowPtr = resize(dst.RowPtr, a.Cols+1)
	dst.ColIdx = resize(dst.ColIdx, nnz)
	dst.Val = resize(dst.Val, nnz)
	*perm = resize(*perm, nnz)
	spmm.TransposePermInto(dst, *perm, a)
}

// transposeInto writes aᵀ into dst, reusing its storage: columns of each
// row ascend because rows are visited in order.
func transposeInto(dst *spmm.CSR, a *spmm.CSR) {
	dst.Rows, dst.Cols = a.Cols, a.Rows
	dst.RowPtr = resize(dst.RowPtr, a.Cols+1)
	clear(dst.RowPtr)
	for _, c := range a.ColIdx {
		dst.RowPtr[c+1]++
	}
	for j := 0; j < a.Cols; j++ {
		dst.RowPtr[j+1] += dst.RowPtr[j]
	}
	nnz := a.NNZ()
	dst.ColIdx = resize(dst.ColIdx, nnz)
	dst.Val = resize(dst.Val, nnz)
	// RowPtr[j] is the next free slot of row j while filling; shifted back after.
	for i := 0; i < a.Rows; i++ {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			c := a.ColIdx[p]
			q := dst.RowPtr[c]
			dst.ColIdx[q], dst.Val[q] = int32(i), a.Val[p]
			dst.RowPtr[c]++
		}
	}
	for j := a.Cols; j > 0; j-- {
		dst.RowPtr[j] = dst.RowPtr[j-1]
	}
	dst.RowPtr[0] = 0
}

// resize returns s with length n, reusing its storage when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	// Huge pages: the exchanged rows are an SpMM's dense operand, whose
	// rows it gathers at random (internal/hugepage).
	return hugepage.Make[T](n + n/4)[:n]
}
