package mpi

import (
	"strings"
	"testing"
)

// TestCheckLaunch runs the rule of a wrong launch over launchers, worlds
// and every library: the line names the launcher, the build and the
// --mpi to use, and never the grid.
func TestCheckLaunch(t *testing.T) {
	srun8 := map[string]string{"SLURM_JOB_ID": "7", "SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "8", "SLURM_PROCID": "3", "SLURM_NTASKS": "8"}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		world int
		lib   Library
		want  string // the whole line; "" for none
	}{
		{"srun -n 8 --mpi=none, MPICH", srun8, 1, mpich,
			"mpi: Init: srun started 8 ranks (SLURM_STEP_NUM_TASKS=8) but MPI sees 1: this scalegnn is built with MPICH, which srun starts with --mpi=pmi2 (srun --mpi=pmi2 -n 8 ...; srun --mpi=list shows this Slurm's plugins)"},
		{"srun -n 8 --mpi=pmi2, Open MPI", map[string]string{"SLURM_STEP_NUM_TASKS": "8", "PMI_SIZE": "8", "PMI_RANK": "0"}, 1, openMPI,
			"mpi: Init: srun started 8 ranks (PMI_SIZE=8) but MPI sees 1: this scalegnn is built with Open MPI, which srun starts with --mpi=pmix (srun --mpi=pmix -n 8 ...; srun --mpi=list shows this Slurm's plugins)"},
		{"srun -n 2 --mpi=pmix, Cray MPICH", map[string]string{"SLURM_STEP_NUM_TASKS": "2", "PMIX_RANK": "1"}, 1, crayMPICH,
			"mpi: Init: srun started 2 ranks (SLURM_STEP_NUM_TASKS=2) but MPI sees 1: this scalegnn is built with Cray MPICH, which srun starts with --mpi=cray_shasta (srun --mpi=cray_shasta -n 2 ...; srun --mpi=list shows this Slurm's plugins)"},
		{"Open MPI's mpirun, MPICH", map[string]string{"OMPI_COMM_WORLD_SIZE": "4"}, 1, mpich,
			"mpi: Init: Open MPI's mpirun started 4 ranks (OMPI_COMM_WORLD_SIZE=4) but MPI sees 1: this scalegnn is built with MPICH, which Open MPI's mpirun cannot start: use MPICH's mpiexec (hydra) or srun --mpi=pmi2, or a scalegnn built for the launcher's MPI"},
		{"hydra, Open MPI", map[string]string{"PMI_SIZE": "2", "MPI_LOCALNRANKS": "2"}, 1, openMPI,
			"mpi: Init: hydra's mpiexec started 2 ranks (PMI_SIZE=2) but MPI sees 1: this scalegnn is built with Open MPI, which hydra's mpiexec cannot start: use Open MPI's mpirun or srun --mpi=pmix, or a scalegnn built for the launcher's MPI"},
		{"nompi under mpirun", map[string]string{"OMPI_COMM_WORLD_SIZE": "8"}, 1, noMPI,
			"mpi: Init: this scalegnn was built with -tags nompi and runs one rank, but the launcher started 8 (OMPI_COMM_WORLD_SIZE=8); rebuild without -tags nompi"},
		{"Open MPI's mpirun in an allocation, MPICH", map[string]string{"OMPI_COMM_WORLD_SIZE": "2", "OMPI_MCA_orte_hnp_uri": "1.0;tcp://x", "SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "2"}, 1, mpich,
			"mpi: Init: Open MPI's mpirun started 2 ranks (OMPI_COMM_WORLD_SIZE=2) but MPI sees 1: this scalegnn is built with MPICH, which Open MPI's mpirun cannot start: use MPICH's mpiexec (hydra) or srun --mpi=pmi2, or a scalegnn built for the launcher's MPI"},
		{"srun -n 8 --mpi=pmi2, MPICH: right", srun8, 8, mpich, ""},
		{"srun -n 1", map[string]string{"SLURM_STEP_NUM_TASKS": "1"}, 1, openMPI, ""},
		{"batch script", map[string]string{"SLURM_JOB_ID": "7", "SLURM_NTASKS": "16", "SLURM_TASKS_PER_NODE": "16"}, 1, mpich, ""},
		{"no launcher", nil, 1, openMPI, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ReadLaunch(func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			err = checkLaunch(l, tc.world, tc.lib)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("error\n%v\nwant\n%s", err, tc.want)
			case err != nil && (strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "grid")):
				t.Errorf("error %q spans several lines or speaks of the grid", err)
			}
		})
	}
}

// TestReadLaunchPerNode reads the ranks on this node from every launcher.
func TestReadLaunchPerNode(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want int
		from string
	}{
		{map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "8", "SLURM_TASKS_PER_NODE": "2"}, 8, "OMPI_COMM_WORLD_LOCAL_SIZE"},
		{map[string]string{"PMI_LOCAL_SIZE": "6"}, 6, "PMI_LOCAL_SIZE"},
		{map[string]string{"MPI_LOCALNRANKS": "3", "PMI_SIZE": "6"}, 3, "MPI_LOCALNRANKS"},
		{map[string]string{"SLURM_STEP_TASKS_PER_NODE": "8"}, 8, "SLURM_STEP_TASKS_PER_NODE"},
		{map[string]string{"SLURM_STEP_TASKS_PER_NODE": "4(x2)", "SLURM_NODEID": "1"}, 4, "SLURM_STEP_TASKS_PER_NODE"},
		{map[string]string{"SLURM_STEP_TASKS_PER_NODE": "5,3(x2)", "SLURM_NODEID": "2"}, 3, "SLURM_STEP_TASKS_PER_NODE"},
		{map[string]string{"SLURM_STEP_TASKS_PER_NODE": "5,3(x2)"}, 5, "SLURM_STEP_TASKS_PER_NODE"},
		{map[string]string{"SLURM_STEP_TASKS_PER_NODE": "2,7", "SLURM_NODEID": "9"}, 7, "SLURM_STEP_TASKS_PER_NODE"},
		{map[string]string{"SLURM_NTASKS_PER_NODE": "4", "SLURM_TASKS_PER_NODE": "8"}, 4, "SLURM_NTASKS_PER_NODE"},
		{map[string]string{"SLURM_TASKS_PER_NODE": "16"}, 16, "SLURM_TASKS_PER_NODE"},
		{map[string]string{"SLURM_STEP_TASKS_PER_NODE": "4(x", "SLURM_TASKS_PER_NODE": "2"}, 2, "SLURM_TASKS_PER_NODE"},
		{map[string]string{"SLURM_TASKS_PER_NODE": "0"}, 0, ""},
		{nil, 0, ""},
	} {
		l, err := ReadLaunch(func(k string) string { return tc.env[k] })
		if err != nil || l.PerNode != tc.want || l.PerNodeVar != tc.from {
			t.Errorf("ReadLaunch(%v): %d from %q (%v), want %d from %q", tc.env, l.PerNode, l.PerNodeVar, err, tc.want, tc.from)
		}
	}
}
