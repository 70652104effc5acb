package sampler

import (
	"math"

	"scalegnn/spmm"
)

// MeanWeights writes the SAGE-mean weights into m.A.Val: 1/d_i on row i,
// d_i its sampled degree, so that A·H averages the sampled neighbors (a
// row without neighbors aggregates to zero). Both samplers write these;
// MeanWeights restores them after GCNWeights.
func (m *MFG) MeanWeights() {
	for i := 0; i < m.A.Rows; i++ {
		meanRow(&m.A, i)
	}
}

// meanRow writes row i's mean weights.
func meanRow(a *spmm.CSR, i int) {
	p, q := a.RowPtr[i], a.RowPtr[i+1]
	w := 1 / float32(q-p)
	for e := p; e < q; e++ {
		a.Val[e] = w
	}
}

// GCNWeights replaces m.A.Val by Kipf's symmetric weights on the sampled
// graph with self loops, Â = A + I, normalised by sampled degrees: entry
// (i, j) gets 1/sqrt((d_i+1)(c_j+1)), where d_i is destination i's
// sampled degree (its row length) and c_j the number of destinations
// that sampled source j (its column count); the +1 on both sides counts
// the vertex's own self loop, as D̂ = D + I does. The self loops are not
// stored in A: the weight of destination i's own term, 1/sqrt((d_i+1)(c_i+1))
// (destination i is source i), goes into self[i], which is returned
// (grown to A.Rows if shorter), so a GCN layer computes
// A·H + diag(self)·H[:nDst]. With fanouts at least the maximum degree,
// every d_i is the full in-degree and A + I restricted to the MFG is the
// full graph's Â for the layer's rows, so this matches full-graph GCN on
// those rows except that c_j counts only the destinations in the batch.
func (m *MFG) GCNWeights(self []float32) []float32 {
	a := &m.A
	m.colDeg = resize(m.colDeg, a.Cols)
	clear(m.colDeg)
	for _, j := range a.ColIdx[:a.RowPtr[a.Rows]] {
		m.colDeg[j]++
	}
	self = resize(self, a.Rows)
	for i := 0; i < a.Rows; i++ {
		p, q := a.RowPtr[i], a.RowPtr[i+1]
		di := float64(q-p) + 1
		for e := p; e < q; e++ {
			a.Val[e] = float32(1 / math.Sqrt(di*float64(m.colDeg[a.ColIdx[e]]+1)))
		}
		self[i] = float32(1 / math.Sqrt(di*float64(m.colDeg[i]+1)))
	}
	return self
}
