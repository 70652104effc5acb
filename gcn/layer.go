package gcn

import (
	"encoding"

	"scalegnn/internal/enum"
)

// Layer is the kind of graph layer the model stacks: the job file's
// model.layer ("gcn", "sage").
//
// A GCN layer (Kipf & Welling) is H' = Â·H·W with Â = D̃^-1/2 (A+I) D̃^-1/2.
// A SAGE layer is GraphSAGE-mean (Hamilton et al. 2017, the "mean"
// aggregator with the root weight kept apart, as PyG's SAGEConv):
//
//	H' = H·W_self + (D^-1 A)·H·W_neigh
//
// with D^-1 A the row-normalised adjacency without self loops, so that
// row v of (D^-1 A)·H is the mean of v's neighbours' rows (zero for an
// isolated vertex). W_neigh is the layer's "gcn<l>.weight" parameter and
// lies where a GCN weight does; W_self is "gcn<l>.self", with the same
// shape and blocks. Both products are summed before the one all-reduce
// over Q that a GCN layer's transformation already runs: the self term
// needs the layer's input (after dropout) in the aggregation's layout,
// rows R in the output vertex order and columns Q, which is the
// residual's redistribution (Model.redistribute) with the columns kept.
// The backward pass stacks dS = dZ·W_selfᵀ under dH for their one
// all-reduce over P, sums dW_self with dW in one all-reduce over R (the
// two gradients are adjacent), and sends dS back through the inverse
// redistribution before the dropout mask.
//
// The redistribution is not overlapped with the SpMM: collectives offers
// no nonblocking alltoallv, and running the blocking one on a second
// goroutine beside the SpMM would put two goroutines on one Device (one
// CUDA stream, whose operations the Device does not promise to be safe
// to issue concurrently). Its cost is one alltoallv of the input block per
// layer each way, which the performance model counts (perfmodel's
// selfTerm).
type Layer int

const (
	// GCNLayer is Kipf & Welling's graph convolution.
	GCNLayer Layer = iota
	// SAGELayer is GraphSAGE with the mean aggregator.
	SAGELayer
)

var (
	_ encoding.TextMarshaler   = GCNLayer
	_ encoding.TextUnmarshaler = (*Layer)(nil)
)

var layerNames = []string{"gcn", "sage"}

// ParseLayer parses "gcn" or "sage".
func ParseLayer(s string) (Layer, error) { return enum.Parse[Layer]("layer", s, layerNames) }

func (k Layer) String() string { return enum.Name("Layer", k, layerNames) }

// MarshalText returns the name ParseLayer accepts.
func (k Layer) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText parses a name ParseLayer accepts.
func (k *Layer) UnmarshalText(b []byte) error {
	v, err := ParseLayer(string(b))
	if err == nil {
		*k = v
	}
	return err
}
