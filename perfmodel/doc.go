// Package perfmodel predicts, for a training job and a number of ranks,
// the epoch time and the memory per rank of every process grid
// Gd×Gx×Gy×Gz, so that a job can choose its grid before it starts
// (Plexus §4, extended to the 4D grid of ScaleGNN).
//
// The prediction has three parts:
//
//   - communication: Plan lists every collective one training step and one
//     evaluation issue on a rank — message size, element size, group and
//     group size — exactly as package gcn issues them (the layouts of
//     docs/architecture.md, uneven blocks from grid.Block). Each is timed
//     as a ring/Rabenseifner bandwidth term plus a latency term, with the
//     bandwidth of the group chosen by whether the group stays inside a
//     node under the rank mapping of package grid (Plexus eq. 4.5–4.6).
//     An all-reduce of 32 MiB or more also pays a calibrated cost per
//     byte for the temporary buffer malloc maps afresh on each such call
//     (Link.Large).
//   - computation: the SpMMs, GEMMs and element-wise passes of a step, from
//     the local shapes, timed with a Machine's coefficients. The linear SpMM
//     model charges a cost per nonzero besides the cost per multiply-add,
//     which is what makes tall-skinny dense operands slow (Plexus Table 2);
//     Plexus's own fitted form (eq. 4.4) is available for comparison.
//   - memory: adjacency shards (three, six with double permutation),
//     features, gcn's arenas (exactly, by gcn's arena plan), weights
//     with gradients and optimizer moments, and communication buffers.
//
// A Machine holds the coefficients. Calibrate measures them on the target
// machine under the launch that training will use; LoadMachine reads a
// profile written by it; DefaultMachine is used when there is none.
//
// Predict enumerates the grids of G ranks and ranks them; Enumerate alone
// lists the grids.
package perfmodel
