package grappa

import "scalegnn/spmm"

// Byte costs of the isolated mode, for the byte counters and the
// performance model. Only two kinds of traffic exist: the gradient
// all-reduce every step and chunk reads at super-epoch boundaries.

// GradientBytes is what one rank sends in a ring all-reduce of params
// float32 gradients over w workers: 2(w−1)/w · 4·params (reduce-scatter
// then all-gather). One worker sends nothing.
func GradientBytes(params, w int) int64 {
	if w <= 1 {
		return 0
	}
	return int64(2*(w-1)) * 4 * int64(params) / int64(w)
}

// ChunkBytes is what reading chunk c costs: ChunkReadBytes of its rows
// and their adjacency entries.
func ChunkBytes(adj *spmm.CSR, ch *Chunks, c, features int) int64 {
	var nnz int64
	for _, v := range ch.Members[c] {
		nnz += adj.RowPtr[v+1] - adj.RowPtr[v]
	}
	return int64(ChunkReadBytes(float64(len(ch.Members[c])), float64(nnz), features))
}

// ChunkReadBytes is what reading rows rows with nnz adjacency entries
// costs: 8 bytes of row pointer per row, 8 per entry (int32 column and
// float32 value), 4 per feature and 4 + 1 for the label and split.
func ChunkReadBytes(rows, nnz float64, features int) float64 {
	return 8*rows + 8*nnz + 4*float64(features)*rows + 5*rows
}
