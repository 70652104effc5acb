#!/usr/bin/env bash
# wrong-pmi.sh [BINARY]: what srun -n 8 --mpi=none (or a wrong --mpi)
# gives each task, simulated without Slurm: the variables srun sets for a
# step of 8 tasks, and an MPI that starts alone (a singleton). Rank 0 must
# print one line naming srun, the build and the --mpi to use, and no grid
# advice; rank 3 must print nothing; both must exit 1. Before issue 25
# every task said "grid 2x2x2 (d=1) has 8 ranks but the job was started
# with 1: set grid.x*grid.y*grid.z*grid.d = 1".
set -u
bin=${1:-./scalegnn}
fail=0
for rank in 0 3; do
	out=$(env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMI_RANK -u PMIX_RANK -u MPI_LOCALNRANKS \
		SLURM_JOB_ID=1 SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=8 SLURM_NTASKS=8 SLURM_PROCID=$rank \
		timeout 60 "$bin" -config examples/cora-8.toml 2>&1)
	rc=$?
	echo "task $rank: exit $rc: $out"
	[ $rc = 1 ] || fail=1
	case $rank:$out in
	0:*grid*) fail=1 ;;
	0:*"srun started 8 ranks"*"--mpi="*) ;;
	0:*) fail=1 ;;
	3:?*) fail=1 ;;
	esac
done
[ $fail = 0 ] || { echo "wrong-pmi.sh: FAIL"; exit 1; }
