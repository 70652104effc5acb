// Package neighbor is the "neighbor" training mode: FastSample's
// distributed neighbor-sampling training
// (the FastSample paper) with GraphSAGE-style
// message-flow graphs (MFGs).
//
// Every rank is a data-parallel worker. Hybrid partitioning: each rank
// keeps the whole topology and only its 1/G row block of the input
// features (Graph, Owner). Each step every rank takes the same number of
// training vertices as seeds (Seeds), samples their MFGs with package
// sampler's fused sampler in a prefetcher (Builder), fetches the input
// features of the sampled frontier it does not own in one all-to-all-v
// exchange (Exchanger), and runs the model on the MFGs on its Device
// (Model); the gradients are then averaged in one all-reduce and every
// rank applies the same Adam step. Evaluation is full-graph, layer by
// layer, without sampling (Evaluator).
//
// Layers. A SAGE layer is h'_v = h_v·W_self + mean_{u∈S(v)} h_u·W_neigh
// over the sampled neighbours S(v) (sampler's weights 1/|S(v)|). A GCN
// layer keeps the full-graph normalisation Â = D̃^-1/2 (A+I) D̃^-1/2, with
// FULL-graph degrees, and rescales the sampled neighbours by d_v/|S(v)|:
//
//	h'_v = (Â_vv·h_v + (d_v/|S(v)|)·Σ_{u∈S(v)} Â_vu·h_u)·W
//
// This is an unbiased estimate of the full-graph layer (each neighbour is
// drawn with probability |S(v)|/d_v), the self loop is always kept, and
// when every fanout is at least the maximum degree a step computes exactly
// the full-graph GCN's outputs for its seeds, which is what the tests hold
// it to. DGL's usual choice, the symmetric normalisation of the sampled
// graph's own degrees (sampler.MFG.GCNWeights), changes the operator with
// the fanout and equals the full-graph GCN only for full fanouts on a
// regular graph; the model evaluated on the full graph is Â's, so the
// training operator should estimate Â.
//
// A GAT layer (gcn.GAT) attends over the sampled neighbours and the
// target itself (gatPattern), so for full fanouts it is the full-graph
// GAT. A rank holds its targets' rows whole, so the softmax is local;
// attention dropout is keyed by the global ids of target and source, as
// on every grid. Its backward pass reads the attention coefficients
// through the transposed block (Batch.Perm).
//
// Randomness is counter-based: the seed permutation is a function of
// (seed, epoch), the neighbours of (seed, step, layer, vertex) and dropout
// of (seed, step, site, vertex, column), never of the rank, so the same
// global seed set trains identically on 1, 2 or 8 ranks.
//
// Communication per training step, on the training communicator: one
// feature exchange, counted as one although it is three AlltoallvF32
// calls (the request counts, the requested ids as float32 bit patterns,
// the feature rows), and one all-reduce of the gradients. StepBytes is the
// formula the byte counters obey. Evaluation communicates on a
// communicator of its own (an all-gather per layer), so its bytes are
// counted apart.
//
// Checkpoints. The model is whole on every rank: package jobs writes it
// from rank 0 (DownloadParam, checkpoint.SaveReplicated) and a resume
// uploads it on every rank (UploadParam, SetOptimizerSteps); with the
// step counter restored, the resumed run continues exactly. Fingerprint
// identifies the dataset a checkpoint belongs to.
//
// perfmodel.PredictNeighbor models a step's time, bytes (StepBytes) and
// memory at the expected MFG sizes.
//
// docs/architecture.md shows how this package fits with the others.
package neighbor
