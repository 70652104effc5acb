// Package infer runs a trained model over a whole graph layer by layer, a
// block of rows at a time ("layer-wise inference", the loop DGL's and
// PyG's inference examples use for graphs whose activations do not fit):
// for each layer, every row block's input is transformed (T = H·W), the
// transformed rows of every rank are gathered, and each block's rows are
// aggregated from a strip of the adjacency read from the source (every
// column block of its rows). Only one layer's output is kept, per block, in
// memory or in files; the graph is never held whole: a rank holds the
// transformed layer input of all N vertices (N × the layer's width; its
// own rows written in their place and gathered in place), one adjacency
// strip and its own blocks' activations. That memory, but for the strips,
// is taken and faulted in when the engine is made (reserve.go). In the
// last layer only the rows in a split are computed.
//
// It computes what gcn.Model's full-graph evaluation computes (GCN, SAGE
// and GAT layers, input projection, norm, residual and output head), in
// float32 with its sums in another order: within 1e-5 (TestMatchesModel).
// The orders of the source must agree (no double permutation).
package infer
