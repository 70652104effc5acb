# Sourced by the sbatch scripts: the environment for a scalegnn built
# against Cray MPICH (HPE Cray EX: Perlmutter, Frontier, LUMI):
#   module load PrgEnv-gnu cray-mpich
#   CC=cc go build -tags craympi -o scalegnn .
# (the cc wrapper supplies MPI's flags; see collectives/mpi/doc.go).
#
# Cray MPICH's srun plugin is cray_shasta; its GPU support is not used.
export SRUN_MPI=${SRUN_MPI:-cray_shasta}
export MPICH_GPU_SUPPORT_ENABLED=0
# Report the rank-to-core binding once at start, for the log.
export MPICH_CPUMASK_DISPLAY=${MPICH_CPUMASK_DISPLAY:-0}
export OPENBLAS_NUM_THREADS=1
