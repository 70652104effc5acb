//go:build craympi && !nompi

package mpi

// The library this build links (-tags craympi), for the tests of
// gpuaware_test.go: asked through its environment; srun starts the ranks.
const (
	testMPI    = "craympi"
	testQuery  = "Cray MPICH: "
	testMPIRun = "srun"
)
