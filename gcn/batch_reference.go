package gcn

import (
	"scalegnn/sampler"
	"scalegnn/spmm"
)

// SerialBatch is the serial definition of the mini-batch that data-parallel
// group `group` trains on at step: its sorted vertices S and the graph
// induced on them, renumbered in S's order — the rows and columns of Â at
// S with off-diagonal values divided by p = (B−1)/(N−1) (ScaleGNN eq. 21,
// 24), and the features, labels and masks of S. A Reference over it (with
// Verts = S) is what a distributed mini-batch step is checked against.
// For a SAGE model g.Adj is D^-1 A (MeanAdjacency), which has no diagonal:
// every entry is divided by p (batchMeanRescale).
func SerialBatch(g *Graph, seed uint64, group, step, b int) ([]int32, *Graph) {
	n := g.Adj.Rows
	verts := sampler.Uniform(seed, group, step, n, b)
	p := sampler.InclusionProbability(n, b)
	index := make(map[int32]int32, len(verts))
	for i, v := range verts {
		index[v] = int32(i)
	}
	var ri, ci []int32
	var val []float32
	adj := g.Adj
	for i, u := range verts {
		for k := adj.RowPtr[u]; k < adj.RowPtr[u+1]; k++ {
			j, ok := index[adj.ColIdx[k]]
			if !ok {
				continue
			}
			v := float64(adj.Val[k])
			if adj.ColIdx[k] != u {
				v /= p
			}
			ri, ci, val = append(ri, int32(i)), append(ci, j), append(val, float32(v))
		}
	}
	f := 0
	if n > 0 {
		f = len(g.Features) / n
	}
	sub := &Graph{Adj: spmm.FromCOO(len(verts), len(verts), ri, ci, val)}
	for _, v := range verts {
		sub.Features = append(sub.Features, g.Features[int(v)*f:(int(v)+1)*f]...)
		sub.Labels = append(sub.Labels, g.Labels[v])
		sub.Train = append(sub.Train, g.Train[v])
		sub.Val = append(sub.Val, g.Val[v])
		sub.Test = append(sub.Test, g.Test[v])
	}
	return verts, sub
}
