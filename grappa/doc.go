// Package grappa holds the parts of Grappa's gradient-only training
// (the Grappa paper, §3.3–3.6) that do not depend on MPI or a
// Device: the one-time split of the vertices into chunks, the sweep
// schedule that pairs each worker's pinned base chunk with a swept chunk
// per super-epoch, the phases in which M ranks train P ≥ M partitions
// (Phases), the vertex set of a partition (induced on its two chunks
// or closed under k hops of its training vertices), the batch-level
// coverage correction factors (eq. 12 and the shrinkage factor eq. 18) and
// the training controller (fixed epochs per super-epoch plus the
// coverage-deficit early switch).
//
// Every rank is one worker (a 1×1×1 grid per replica, Gd = ranks): a
// partition is a small subgraph that fits one device, so sharding it over a
// 3D grid would add activation traffic that isolation exists to remove.
//
// Measured on Cora with 8 workers (jobs, examples/cora-isolated.toml): halo
// partitions hold 48% of the vertices and give every training vertex its
// whole 2-hop field, so ĉ = 1 and all three corrections are the identity;
// induced partitions hold 25% of the vertices and 6% of the edges, ĉ ≈ 0.44.
// A factor scales the gradient of the worker's whole objective, coupled
// weight decay included (gcn.Model.GradScale): scaling the data gradient
// alone let eq. 18's factors of about 0.01 hand the balance to the decay,
// and training collapsed. Under Adam a factor common to every worker then
// changes nothing (Adam is invariant to the gradient's scale); what a
// factor does is weigh workers, and a batch's steps, against each other.
package grappa
