package dataset

import (
	"fmt"
	"math"

	"scalegnn/spmm"
)

// RowNormalize scales every feature row of g to sum 1, the preprocessing of
// Kipf & Welling (2017) for bag-of-words features. Rows summing to zero
// (featureless vertices) are left as they are. Sums are taken in float64.
func RowNormalize(g *Graph) {
	f := g.F
	if f == 0 {
		return
	}
	for i := 0; i < g.N; i++ {
		row := g.Features[i*f : (i+1)*f]
		var s float64
		for _, x := range row {
			s += float64(x)
		}
		if s == 0 {
			continue
		}
		inv := 1 / s
		for j, x := range row {
			row[j] = float32(float64(x) * inv)
		}
	}
}

// NormalizeGCN returns Â = D^-1/2 (A + I) D^-1/2, the propagation matrix of
// a GCN layer, where D is the diagonal of row sums of A + I. A must be
// square and is expected symmetric (as a Graph's Adj is), so that row and
// column degrees agree; an existing diagonal entry has 1 added to it. The
// arithmetic is float64, the result float32, and rows with a non-positive
// degree (only possible with negative weights) get zero scale. A non-square
// matrix is a programmer error and panics with spmm.ShapeError.
func NormalizeGCN(adj *spmm.CSR) *spmm.CSR {
	if adj.Rows != adj.Cols {
		panic(spmm.ShapeError(fmt.Sprintf("NormalizeGCN: %d×%d adjacency is not square", adj.Rows, adj.Cols)))
	}
	n := adj.Rows
	dinv := make([]float64, n)
	out := &spmm.CSR{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	for i := 0; i < n; i++ {
		lo, hi := adj.RowPtr[i], adj.RowPtr[i+1]
		d := 1.0
		diag := false
		for p := lo; p < hi; p++ {
			d += float64(adj.Val[p])
			diag = diag || int(adj.ColIdx[p]) == i
		}
		if d > 0 {
			dinv[i] = 1 / math.Sqrt(d)
		}
		out.RowPtr[i+1] = out.RowPtr[i] + (hi - lo)
		if !diag {
			out.RowPtr[i+1]++
		}
	}
	nnz := out.RowPtr[n]
	out.ColIdx = make([]int32, nnz)
	out.Val = make([]float32, nnz)
	for i := 0; i < n; i++ {
		w := out.RowPtr[i]
		put := func(j int32, a float64) {
			out.ColIdx[w] = j
			out.Val[w] = float32(a * dinv[i] * dinv[j])
			w++
		}
		lo, hi := adj.RowPtr[i], adj.RowPtr[i+1]
		self := false // whether the diagonal has been written
		for p := lo; p < hi; p++ {
			j := adj.ColIdx[p]
			switch {
			case int(j) == i:
				put(j, float64(adj.Val[p])+1)
				self = true
				continue
			case int(j) > i && !self:
				put(int32(i), 1)
				self = true
			}
			put(j, float64(adj.Val[p]))
		}
		if !self {
			put(int32(i), 1)
		}
	}
	return out
}
