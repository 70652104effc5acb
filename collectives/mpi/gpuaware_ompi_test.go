//go:build !mpich && !craympi && !nompi

package mpi

// The library this build links (Open MPI, the default), for the tests of
// gpuaware_test.go.
const (
	testMPI    = "ompi"
	testQuery  = "Open MPI: MPIX_Query_cuda_support() = "
	testMPIRun = "mpirun"
)
