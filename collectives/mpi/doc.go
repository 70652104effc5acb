// Package mpi implements collectives.Comm on MPI. It is the only cgo
// binding to MPI in scalegnn: a thin layer over the C API, one MPI call per
// method, with every return code checked and turned into a Go error that
// names the call and carries MPI_Error_string's text.
//
// Handles (communicators, datatypes, operators, requests) are held on the
// Go side as the C types of the MPI library in use and are only compared
// and passed back, never interpreted, so the package builds against Open
// MPI (where they are pointers), MPICH and Cray MPICH (where they are
// integers). The MPI constants come from C getter functions (shim.h),
// since they are macros that cgo cannot always take as they are.
//
// Build flags: by default the package links Open MPI found by pkg-config
// (ompi). Build with -tags mpich for MPICH (pkg-config mpich), or with
// -tags craympi and CC=cc on Cray systems, where the compiler wrapper
// supplies the flags.
//
// Without MPI: build with -tags nompi and the package is pure Go (no cgo):
// Init returns a one-rank world (collectives.NewLocalWorld(1), with an
// Abort that exits the process), so scalegnn runs single-rank jobs where no
// MPI is installed. Started by a launcher with more ranks (mpirun, hydra,
// srun: OMPI_COMM_WORLD_SIZE, PMI_SIZE, MPI_LOCALNRANKS or
// SLURM_STEP_NUM_TASKS above 1), Init fails with one line saying to rebuild
// without the tag, instead of running the same one-rank job several times
// (the rule of every build, below).
//
// Launchers: ReadLaunch reads what the launcher says in the environment
// (how many ranks it started, how many share this node), before MPI
// starts. One rule (checkLaunch) covers every build: when the launcher
// started more than one rank and MPI's world holds one, Init fails with a
// *LaunchError naming the launcher, this build's library (Built) and the
// srun --mpi that starts it (pmix for Open MPI, pmi2 for MPICH,
// cray_shasta for Cray MPICH), or, under -tags nompi, saying to rebuild.
// The ranks would otherwise each run the whole job alone.
//
// Threads: Init requests MPI_THREAD_MULTIPLE and accepts
// MPI_THREAD_SERIALIZED, since goroutines move between OS threads. Under
// MPI_THREAD_SERIALIZED every MPI call is made under a mutex shared by the
// communicators of the job (two goroutines of a rank that block in
// collectives on different communicators at once can then deadlock; MPI
// libraries that provide MPI_THREAD_MULTIPLE do not have this limit). Init
// locks the calling goroutine to its OS thread, because MPI wants Finalize
// on the thread that initialized it: call Finalize from the goroutine that
// called Init.
//
// Nonblocking calls: MPI keeps the address of an IAllReduceF32 buffer after
// the call returns, which cgo allows only for pinned Go memory. The buffer
// is pinned with a runtime.Pinner from the start of the call until Wait,
// and is neither copied nor moved; Wait must be called on every request
// (the Go runtime panics if it collects a Pinner that still pins memory).
//
// Empty collectives: MPI implementations may return at once from a
// collective with a zero count, while collectives.Comm promises that an
// empty collective still synchronises, so an empty all-reduce, all-gather,
// reduce-scatter or broadcast is a barrier (MPI_Ibarrier for
// IAllReduceF32). Alltoallv is the exception: no rank knows that every
// rank's counts are zero.
//
// Counts: MPI counts and displacements are C ints; a length beyond
// math.MaxInt32 elements is an error that says so, never a truncation.
//
// GPU memory: the communicator also implements device.DeviceComm.
// DeviceAware reports whether the MPI library takes CUDA device pointers,
// as the library says at run time, asked once per process after Init and
// cached: Cray MPICH when MPICH_GPU_SUPPORT_ENABLED=1 and libmpi_gtl_cuda
// is loaded; otherwise MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA)
// (MPICH 4), else MPIX_Query_cuda_support (Open MPI). The queries are
// looked up with dlsym, so one binary runs on every MPI, and only the
// run-time answer counts (a library built with CUDA support may still
// run without it). A library without a query is taken as not GPU-aware.
// SCALEGNN_GPU_AWARE_MPI=0 forces staging through host memory (for
// debugging); =1 asserts GPU-awareness for a library that has no query,
// but cannot overrule one that says no (it would reduce device memory on
// the CPU); any other value stages, and DeviceAware's phrase says why.
// AllReduceF32Device, AllReduceI64Device and IAllReduceF32Device are the
// host calls on a device address and a count (MPI_IN_PLACE, the same count
// and empty-call rules, nothing pinned); called when DeviceAware is false
// they panic with a *DeviceMisuseError. Under -tags nompi the one-rank
// world needs neither.
//
// Communicators made by Split are not freed (collectives.Comm has no Free);
// MPI_Finalize releases them.
//
// Global state: the only process-wide state is MPI's own (Init, Finalize,
// Initialized act on the MPI library); the Go side keeps none in package
// variables, except the cached answer of DeviceAware (the library's, which
// cannot change while the process runs) and, under -tags nompi, one
// variable that stands in for the library's initialized and finalized
// flags.
//
// docs/architecture.md shows how this package fits with the others.
package mpi
