package cagnet

import (
	"scalegnn/gcn"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// subBlock returns a[r0:r1, c0:c1] with column indices relative to c0.
func subBlock(a *spmm.CSR, r0, r1, c0, c1 int) *spmm.CSR {
	b := &spmm.CSR{Rows: r1 - r0, Cols: c1 - c0, RowPtr: make([]int64, r1-r0+1)}
	for i := r0; i < r1; i++ {
		for e := a.RowPtr[i]; e < a.RowPtr[i+1]; e++ {
			if j := int(a.ColIdx[e]); j >= c0 && j < c1 {
				b.ColIdx = append(b.ColIdx, int32(j-c0))
				b.Val = append(b.Val, a.Val[e])
			}
		}
		b.RowPtr[i-r0+1] = int64(len(b.ColIdx))
	}
	return b
}

// permuted returns g with its vertices in the order of p.P1: row i of the
// result is original vertex P1[i]. Losses and gradients do not depend on
// the order, so a permuted run matches the unpermuted reference.
func permuted(g *gcn.Graph, p *permute.Perms, features int) *gcn.Graph {
	n := g.Adj.Rows
	out := &gcn.Graph{Adj: permute.Permute(g.Adj, p.P1, p.P1), Features: make([]float32, len(g.Features)),
		Labels: make([]int32, n), Train: make([]bool, n), Val: make([]bool, n), Test: make([]bool, n), Classes: g.Classes}
	for i, v := range p.P1 {
		copy(out.Features[i*features:(i+1)*features], g.Features[int(v)*features:(int(v)+1)*features])
		out.Labels[i], out.Train[i], out.Val[i], out.Test[i] = g.Labels[v], g.Train[v], g.Val[v], g.Test[v]
	}
	return out
}
