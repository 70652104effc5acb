package main

import "testing"

// TestResumeLine checks the resume hint: the launcher that started the
// run (srun with its --mpi, mpirun, hydra's mpiexec, none), the binary as
// typed, and the arguments actually used with -resume replaced.
func TestResumeLine(t *testing.T) {
	srun := map[string]string{"SLURM_JOB_ID": "12", "SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "8", "SLURM_PROCID": "0"}
	srunPMIx := map[string]string{"SLURM_JOB_ID": "12", "SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "8", "SLURM_MPI_TYPE": "pmix", "PMIX_RANK": "0", "OMPI_COMM_WORLD_SIZE": "8"}
	mpirun := map[string]string{"OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_RANK": "0", "OMPI_MCA_orte_hnp_uri": "1.0;tcp://127.0.0.1:1"}
	mpirunInAlloc := map[string]string{"OMPI_COMM_WORLD_SIZE": "8", "OMPI_MCA_orte_hnp_uri": "1.0;tcp://127.0.0.1:1", "SLURM_JOB_ID": "12", "SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "1"}
	hydra := map[string]string{"PMI_SIZE": "4", "PMI_RANK": "0", "MPI_LOCALNRANKS": "4"}
	const ck = "runs/x/checkpoints/ckpt-00000010"
	for _, tc := range []struct {
		name  string
		argv  []string
		ranks int
		env   map[string]string
		cwd   string
		want  string
	}{
		{"srun", []string{"/home/u/run/./scalegnn", "-config", "job.toml"}, 8, srun, "/home/u/run",
			"srun -n 8 ./scalegnn -config job.toml -resume " + ck},
		{"srun --mpi=pmix", []string{"/opt/bin/scalegnn", "-config", "job.toml", "-v"}, 8, srunPMIx, "/home/u/run",
			"srun -n 8 --mpi=pmix /opt/bin/scalegnn -config job.toml -v -resume " + ck},
		{"mpirun", []string{"./scalegnn", "-config", "job.toml"}, 8, mpirun, "/home/u/run",
			"mpirun -np 8 ./scalegnn -config job.toml -resume " + ck},
		{"mpirun in an allocation", []string{"./scalegnn", "-config", "job.toml"}, 8, mpirunInAlloc, "/home/u/run",
			"mpirun -np 8 ./scalegnn -config job.toml -resume " + ck},
		{"hydra", []string{"./scalegnn", "-config", "job.toml"}, 4, hydra, "/home/u/run",
			"mpiexec -n 4 ./scalegnn -config job.toml -resume " + ck},
		{"alone", []string{"./scalegnn", "-config", "job.toml", "-resume", "latest"}, 1, nil, "/home/u/run",
			"./scalegnn -config job.toml -resume " + ck},
		{"alone, -resume=", []string{"scalegnn", "-resume=old", "-config", "job.toml"}, 1, nil, "/",
			"scalegnn -config job.toml -resume " + ck},
		{"binary outside cwd", []string{"/home/u/bin/../bin/scalegnn", "-config", "j.toml"}, 1, nil, "/home/u/run",
			"/home/u/bin/scalegnn -config j.toml -resume " + ck},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := resumeLine(tc.argv, tc.ranks, ck, func(k string) string { return tc.env[k] }, tc.cwd)
			if got != tc.want {
				t.Errorf("resumeLine:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
