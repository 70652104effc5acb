package gcn

import (
	"encoding"

	"scalegnn/internal/enum"
)

// Layer is the kind of graph layer the model stacks: the job file's
// model.layer ("gcn", "sage", "gat").
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
	// GATLayer is graph attention (Veličković et al. 2018); see GAT.
	GATLayer
)

// GAT describes a graph attention layer as every method computes it.
// With K heads, head k projects the input, Y_k = H·W_k (F' columns), and
// scores every edge (i, j) of A + I (j a neighbour of i, i itself
// included):
//
//	e_ijk = LeakyReLU_0.2(s_ik + t_jk),  s_ik = Y_k[i]·a_src,k,  t_jk = Y_k[j]·a_dst,k
//	α_ijk = softmax over j of e_ijk (per row i and head k)
//	out_ik = Σ_j α_ijk Y_k[j]
//
// A hidden layer concatenates its heads (K·F' columns) and applies ELU;
// the last layer (without an output head) averages its heads. Dropout
// applies to the layer's input (site l, as for GCN) and to α (site
// AttentionSite(l)): α_ijk is kept by the counter draw of (seed, step,
// site, global i, global j·K + k), so every rank and the serial reference
// drop the same attention coefficients. The layer has no bias, as the
// GCN and SAGE layers have none. Parameters: "gcn<l>.weight" (in × K·F'),
// "gcn<l>.att_src" and "gcn<l>.att_dst" (K × F'), all Glorot-initialised.
//
// Only two scalars per vertex and head enter the logits, so a distributed
// layer needs no general sampled dense-dense product: each rank scores
// its own shard's nonzeros from the s of its rows and the t of its
// columns, and all-reduces the softmax's row maximum and row sum over the
// axis that splits a row's columns.
const (
	// GATSlope is the LeakyReLU's negative slope in the logits.
	GATSlope = 0.2
)

// AttentionSite returns the dropout site of layer l's attention
// coefficients, after every input site (layers 0..L-1) and the head's (L).
func (c Config) AttentionSite(l int) int { return c.Layers + 1 + l }

var (
	_ encoding.TextMarshaler   = GCNLayer
	_ encoding.TextUnmarshaler = (*Layer)(nil)
)

var layerNames = []string{"gcn", "sage", "gat"}

// ParseLayer parses "gcn", "sage" or "gat".
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
