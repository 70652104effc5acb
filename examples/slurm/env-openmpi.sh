# Sourced by the sbatch scripts: the environment for a scalegnn built
# against Open MPI (the default build: go build -o scalegnn .).
#
# Load your site's modules here, e.g.
#   module load openmpi openblas go
# srun starts the ranks through PMIx; Open MPI must have been built with
# Slurm/PMIx support (check: srun --mpi=list lists pmix).
export SRUN_MPI=${SRUN_MPI:-pmix}
# One BLAS thread per rank: scalegnn runs its own kernel threads (sized
# from each rank's CPU binding; see docs/jobfile.md, runtime.threads).
export OPENBLAS_NUM_THREADS=1
