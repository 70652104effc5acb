//go:build nompi

package mpi

import (
	"fmt"
	"strconv"
)

// launcherVars are the environment variables in which MPI launchers tell
// each process how many ranks they started, checked in this order:
// Open MPI's mpirun, the PMI of MPICH's hydra (and Cray's and Intel's),
// hydra's count of ranks on this node, and Slurm's srun (per job step;
// SLURM_NTASKS is not used, since a batch script holds it while running a
// single process).
var launcherVars = [...]string{
	"OMPI_COMM_WORLD_SIZE",
	"PMI_SIZE",
	"MPI_LOCALNRANKS",
	"SLURM_STEP_NUM_TASKS",
}

// checkLauncher returns an error when getenv shows that a launcher started
// more than one rank, which a build without MPI cannot join into one job,
// or holds a rank count that is not a positive integer. An unset or empty
// variable says nothing.
func checkLauncher(getenv func(string) string) error {
	for _, key := range launcherVars {
		v := getenv(key)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("mpi: Init: environment variable %s=%q is not a rank count (want a positive integer)", key, v)
		}
		if n > 1 {
			return fmt.Errorf("mpi: Init: this scalegnn was built with -tags nompi and runs one rank, but the launcher started %d (%s=%d); rebuild without -tags nompi", n, key, n)
		}
	}
	return nil
}
