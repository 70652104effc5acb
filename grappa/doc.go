// Package grappa holds the parts of Grappa's gradient-only training
// (papers/grappa-gradient-only.txt §3.3–3.5) that do not depend on MPI or a
// Device: the one-time split of the vertices into chunks, the sweep
// schedule that pairs each worker's pinned base chunk with a swept chunk
// per super-epoch, the vertex set of a partition (induced on its two chunks
// or closed under k hops of its training vertices), the batch-level
// coverage correction factors (eq. 12 and the shrinkage factor eq. 18) and
// the training controller (fixed epochs per super-epoch plus the
// coverage-deficit early switch).
//
// Every rank is one worker (a 1×1×1 grid per replica, Gd = ranks): a
// partition is a small subgraph that fits one device, so sharding it over a
// 3D grid would add activation traffic that isolation exists to remove.
package grappa
