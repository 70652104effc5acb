// Package node owns the node-aware thread count: how many kernel threads
// each rank runs, from the cores the rank may use and the ranks that share
// them.
//
// Cores come from the process's CPU affinity mask (sched_getaffinity on
// Linux; runtime.NumCPU, which Go reads from the same mask at start-up,
// elsewhere), so a launcher's binding (mpirun --bind-to core, srun
// --cpu-bind, --cpus-per-task) is already in the count. The ranks that
// share them come from the node communicator (collectives.NodeSplitter,
// MPI_Comm_split_type with MPI_COMM_TYPE_SHARED): the ranks of the node
// exchange their masks, and a rank counts those whose mask overlaps its
// own, itself included. Threads per rank are the cores divided by that
// count, at least 1, and the division happens once: under --bind-to core
// every rank sees one core that no other rank has (1 thread); unbound, 8
// ranks on 2 cores all see the same 2 cores (1 thread); one rank alone on
// 2 cores runs 2.
//
// Threads is the pure rule; Detect is the collective that gathers its
// inputs. Nothing here is MPI-specific or uses cgo.
package node
