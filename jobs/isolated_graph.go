package jobs

import (
	"slices"

	"scalegnn/gcn"
	"scalegnn/spmm"
)

// isolatedGraph returns the graph's structure and training mask in vertex
// ids, what grappa's chunks and partitions are made of, from the job's
// Source: the normalised adjacency Â (rows in order 0, columns in order 1)
// with its positions mapped back to vertex ids. One path serves the graph
// in memory and a prepared dataset alike, and the partitions are the same
// for both. Â's diagonal (the self loops GCN adds) changes no partition:
// grappa.Degrees skips a stored self loop and a vertex is its own 0-hop
// neighbor.
func isolatedGraph(src gcn.Source) (*spmm.CSR, []bool, error) {
	n, o := src.Sizes().N, src.Orders()
	a, err := src.AdjBlock(0, 0, n, 1, 0, n)
	if err != nil {
		return nil, nil, err
	}
	_, tr, _, _, err := src.Labels(0, 0, n)
	if err != nil {
		return nil, nil, err
	}
	r2v, c2v := o.Order[0], o.Order[1]
	// Structure only: partitions, degrees and chunk sizes read no weight,
	// so Val stays nil (at R-MAT scale 20, 130 MB a worker saved).
	adj := &spmm.CSR{Rows: n, Cols: n, RowPtr: make([]int64, n+1), ColIdx: make([]int32, a.NNZ())}
	train := make([]bool, n)
	for r := range n {
		adj.RowPtr[r2v[r]+1] = a.RowPtr[r+1] - a.RowPtr[r]
		train[r2v[r]] = tr[r]
	}
	for v := range n {
		adj.RowPtr[v+1] += adj.RowPtr[v]
	}
	for r := range n {
		row := adj.ColIdx[adj.RowPtr[r2v[r]]:adj.RowPtr[r2v[r]+1]]
		for i, c := range a.ColIdx[a.RowPtr[r]:a.RowPtr[r+1]] {
			row[i] = c2v[c]
		}
		slices.Sort(row)
	}
	return adj, train, nil
}
