//go:build mpich && !craympi && !nompi

package mpi

// The library this build links (-tags mpich), for the tests of
// gpuaware_test.go; Debian's MPICH launcher is mpirun.mpich (mpirun is
// Open MPI's where both are installed).
const (
	testMPI    = "mpich"
	testQuery  = "MPICH: MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) = "
	testMPIRun = "mpirun.mpich"
)
