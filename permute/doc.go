// Package permute owns the vertex permutations that balance the nonzeros of
// the sharded adjacency (Plexus §5.1) and the statistics that measure the
// balance.
//
// Real and R-MAT graphs concentrate their edges in a few vertex ranges, so
// cutting the adjacency into contiguous 2D blocks leaves some ranks with
// many times the mean number of nonzeros. A random relabelling of the
// vertices spreads them: with a single permutation p the stored matrix is
// A[p][:, p]; with a double permutation, shard k of a layer stores
// A[p1][:, p2] (k = 0) or A[p2][:, p1] (k = 1), which also scatters the
// diagonal (self loops) that a single permutation keeps on the diagonal
// blocks. See docs/architecture.md, "Layouts".
//
// Convention: a permutation maps position to original vertex. Row i of
// A[p][:, q] is original row p[i], and its column j is original column q[j].
//
// Everything is deterministic from a seed and pure Go. Scheme is the one
// type for the permutation scheme: the job file, a prepared dataset's
// meta.toml and the performance model decode into it.
package permute
