// Package sampler draws the mini-batches of ScaleGNN's communication-free
// uniform vertex sampling and cuts each rank's part of the induced subgraph
// out of its adjacency shards (papers/scalegnn-4d-minibatch.txt §III-D,
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
// The package knows nothing of the model's layouts: gcn decides which rows
// and columns each shard keeps.
//
// docs/architecture.md shows how this package fits with the others.
package sampler
