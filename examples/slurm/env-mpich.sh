# Sourced by the sbatch scripts: the environment for a scalegnn built
# against plain MPICH (Debian/Ubuntu's mpich and libmpich-dev, or a
# site's MPICH module):
#   module load mpich
#   go build -tags mpich -o scalegnn .
#
# MPICH's processes find each other through PMI-2, which srun provides
# (check: srun --mpi=list lists pmi2). With --mpi=pmix or none, each rank
# starts alone and sees a world of 1.
export SRUN_MPI=${SRUN_MPI:-pmi2}
# One BLAS thread per rank: scalegnn runs its own kernel threads (sized
# from each rank's CPU binding; see docs/jobfile.md, runtime.threads).
export OPENBLAS_NUM_THREADS=1
