// Package launch holds scalegnn's launch and runtime policy: what every
// command that runs on the ranks does around its own work, so that the
// root package keeps only flags and wiring.
//
// It owns:
//
//   - the exit codes (ExitCode), named once for every command and the
//     README's "Output" section;
//   - MPI's start and end (WithMPI): Open MPI's yield setting before
//     MPI_Init when a node runs more ranks than a rank has cores, under
//     any launcher (yieldPlan; one line at start, or what to set with
//     another MPI); a launch MPI did not join said once; setup errors
//     agreed on across the ranks and reported once by the lowest failing
//     rank, finalize on a clean end, abort on a rank's own failure or a
//     panic;
//   - signals (Watch): the stop request a training run checkpoints on,
//     and the repeated signal that ends it at once;
//   - the device a rank runs on (OpenDevice): host devices, the binding
//     of ranks to the node's GPUs, the GPU memory checks and the guard
//     that turns a GPU's out-of-memory panic into one line;
//   - the memory checks before loading, the limits the ranks agree on,
//     and the watchdog that ends a stalled job (StartWatchdog);
//   - Go's soft memory limit (SoftMemoryLimit) and the kernel threads of
//     a rank (RankThreads, NodeFields);
//   - reading a job on every rank (LoadJob).
//
// It has no cgo files of its own; it imports the MPI binding
// (collectives/mpi), so it builds with cgo unless -tags nompi.
package launch
