package dataset

import "scalegnn/spmm"

// Graph is a node-classification dataset held in memory: the raw adjacency
// (no self loops added, not normalised), dense features, labels and the
// train/validation/test split.
type Graph struct {
	Name string
	// N is the number of vertices.
	N int
	// Adj is the N×N adjacency: symmetric, binary (values 1), no self loops,
	// sorted unique columns. GCN normalisation is applied by NormalizeGCN.
	Adj *spmm.CSR
	// F is the feature width; Features is N×F row-major.
	F        int
	Features []float32
	// Classes is the number of classes; Labels[i] in [0, Classes), or -1 for
	// an unlabeled vertex (never in a mask).
	Classes int
	Labels  []int32
	// ClassNames names the classes when the source does (nil otherwise).
	ClassNames []string
	// Train, Val and Test mark the split; a vertex is in at most one.
	Train, Val, Test []bool
}
