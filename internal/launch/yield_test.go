package launch

import (
	"fmt"
	"testing"

	"scalegnn/collectives/mpi"
)

// TestYieldPlan runs the oversubscription rule over launchers, cores and
// libraries: Open MPI gets its yield setting unless the environment has
// it or mpirun marked the node oversubscribed; another MPI gets a line
// saying what to do; a node with a core per rank gets nothing.
func TestYieldPlan(t *testing.T) {
	ompi := mpi.Library{Name: "Open MPI", Srun: "pmix"}
	mpich := mpi.Library{Name: "MPICH", Srun: "pmi2"}
	cray := mpi.Library{Name: "Cray MPICH", Srun: "cray_shasta"}
	none := mpi.Library{Name: "no MPI"}
	const setLine = "scalegnn: 8 ranks on this node (%s) share 2 cores: set OMPI_MCA_mpi_yield_when_idle=1, so that a waiting rank yields its core instead of polling (export OMPI_MCA_mpi_yield_when_idle=0 to keep polling)"
	for _, tc := range []struct {
		name  string
		env   map[string]string
		cores int
		lib   mpi.Library
		set   bool
		line  string
	}{
		{"srun -n 8 on 2 cores", map[string]string{"SLURM_STEP_NUM_TASKS": "8", "SLURM_STEP_TASKS_PER_NODE": "8"}, 2, ompi, true,
			fmt.Sprintf(setLine, "SLURM_STEP_TASKS_PER_NODE=8")},
		{"srun, two nodes of 8", map[string]string{"SLURM_STEP_NUM_TASKS": "16", "SLURM_STEP_TASKS_PER_NODE": "8(x2)", "SLURM_NODEID": "1"}, 2, ompi, true,
			fmt.Sprintf(setLine, "SLURM_STEP_TASKS_PER_NODE=8")},
		{"--ntasks-per-node", map[string]string{"SLURM_NTASKS_PER_NODE": "8"}, 2, ompi, true,
			fmt.Sprintf(setLine, "SLURM_NTASKS_PER_NODE=8")},
		{"mpirun with slots", map[string]string{"OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_SIZE": "8"}, 2, ompi, true,
			fmt.Sprintf(setLine, "OMPI_COMM_WORLD_LOCAL_SIZE=8")},
		{"mpirun --oversubscribe", map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "8", "OMPI_MCA_mpi_oversubscribe": "1"}, 2, ompi, false, ""},
		{"set by the user", map[string]string{"SLURM_STEP_TASKS_PER_NODE": "8", "OMPI_MCA_mpi_yield_when_idle": "0"}, 2, ompi, false, ""},
		{"a core per rank", map[string]string{"SLURM_STEP_TASKS_PER_NODE": "8"}, 8, ompi, false, ""},
		{"more cores", map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "4"}, 64, ompi, false, ""},
		{"no launcher", nil, 2, ompi, false, ""},
		{"no mask", map[string]string{"SLURM_STEP_TASKS_PER_NODE": "8"}, 0, ompi, false, ""},
		{"hydra, MPICH", map[string]string{"PMI_SIZE": "8", "MPI_LOCALNRANKS": "8"}, 2, mpich, false,
			"scalegnn: 8 ranks on this node (MPI_LOCALNRANKS=8) share 2 cores, and a waiting MPICH rank polls its core (MPICH has no setting that makes it yield): start at most 2 ranks per node"},
		{"srun, Cray MPICH", map[string]string{"SLURM_STEP_TASKS_PER_NODE": "4"}, 2, cray, false,
			"scalegnn: 4 ranks on this node (SLURM_STEP_TASKS_PER_NODE=4) share 2 cores, and a waiting Cray MPICH rank polls its core (Cray MPICH has no setting that makes it yield): start at most 2 ranks per node"},
		{"nompi", map[string]string{"SLURM_TASKS_PER_NODE": "8"}, 2, none, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			l, err := mpi.ReadLaunch(getenv)
			if err != nil {
				t.Fatal(err)
			}
			set, line := yieldPlan(l, tc.cores, tc.lib, getenv)
			if set != tc.set || line != tc.line {
				t.Errorf("yieldPlan = %v,\n%q\nwant %v,\n%q", set, line, tc.set, tc.line)
			}
		})
	}
}
