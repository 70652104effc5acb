// Package sampler draws the mini-batches of ScaleGNN's communication-free
// uniform vertex sampling and cuts each rank's part of the induced subgraph
// out of its adjacency shards (the ScaleGNN paper, §III-D,
// §IV-B, Algorithm 2).
//
// Uniform derives the sorted sample S of one step from (seed, group, step)
// alone, so every rank of a data-parallel group draws the same S without a
// message. An Extractor keeps, from one CSR shard, the sampled rows and
// columns, renumbers them compactly and rescales off-diagonal weights by
// 1/p with p = (B−1)/(N−1), which makes the mini-batch aggregation an
// unbiased estimate of the full one. Prefetcher builds the next batch in a
// goroutine while the current one trains.
//
// Steady-state training allocates nothing here: UniformInto, PositionsInto,
// BoundsInto and Extractor.ExtractInto write into storage the caller
// reuses (growing it only for a batch larger than any before), bit for bit
// what the allocating Uniform, Positions, Bounds and Extract return; and
// the Prefetcher builds into items the caller hands back with Release.
//
// NeighborSampler is FastSample's neighbor sampling (the
// FastSample paper, Algorithm 1) for train.mode
// "neighbor": every rank holds the whole topology and, per step, samples
// up to fanouts[l] neighbors of each destination of GNN layer l, uniformly
// without replacement, from its own seeds outward (fanouts[0] is the first
// layer, the outermost hop, as in DGL). The draws of vertex v in layer l
// are a function of (seed, step, l, v) alone, with counter's hashes and
// Floyd's algorithm (O(fanout) whatever the degree): the rank only decides
// which seeds it samples, so a vertex gets the same neighbors on every rank
// and rank count. SampleInto writes each layer's message-flow graph (MFG)
// straight into CSR with compacted ids, the destinations a prefix of the
// sources and new sources numbered by first appearance, with SAGE-mean
// weights (MFG.GCNWeights gives Kipf's instead); SampleUnfusedInto is the
// COO-then-convert baseline and yields the same arrays. A step's MFGs
// (*MFGs) are reusable items for a Prefetcher: build calls SampleInto with
// the step's seeds and Key{seed, step}; MFGs.Input lists the vertices whose
// features the step must fetch.
//
// The package knows nothing of the model's layouts: gcn decides which rows
// and columns each shard keeps.
//
// docs/architecture.md shows how this package fits with the others.
package sampler
