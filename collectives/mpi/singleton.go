//go:build !nompi

package mpi

// launchedVars are set by the launchers that start MPI jobs (Open MPI's
// mpirun, the PMI of hydra, Cray and Intel MPI, PMIx under srun); a
// process with none of them was started alone, as an MPI singleton.
var launchedVars = [...]string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"}

// singleton reports whether getenv shows no launcher: a one-rank job
// that no mpirun or srun watches.
func singleton(getenv func(string) string) bool {
	for _, key := range launchedVars {
		if getenv(key) != "" {
			return false
		}
	}
	return true
}
