#!/usr/bin/env bash
# Checks, without installing anything, that what `make run` (no
# argument) or `make test` (argument "test") needs is here: Go,
# pkg-config, Open MPI (its pkg-config file and launcher), OpenBLAS and,
# for test, MPICH's launcher and pkg-config file, make, pgrep (procps),
# git, and the one-node Slurm of scripts/slurm (slurmctld, slurmd, the
# clients, munge). Prints one line naming
# what is missing and exits 1; silent and 0 when all is there. The
# Makefile's setup target runs scripts/setup.sh when this fails.
set -uo pipefail
missing=()
have() { command -v "$1" >/dev/null 2>&1; }
have go || missing+=("go (1.24 or newer)")
if have pkg-config; then
  pkg-config --exists ompi 2>/dev/null || missing+=("Open MPI development files (pkg-config ompi)")
  if [ "${1:-}" = test ]; then
    pkg-config --exists mpich 2>/dev/null || missing+=("MPICH development files (pkg-config mpich)")
  fi
else
  missing+=(pkg-config)
fi
have mpirun.openmpi || have mpirun || missing+=("Open MPI's mpirun")
if [ "${1:-}" = test ]; then
  have mpirun.mpich || missing+=("MPICH's mpirun.mpich")
  have make || missing+=(make)
  have pgrep || missing+=("procps (pgrep)")
  have git || missing+=(git)
  have slurmctld || missing+=(slurmctld)
  have slurmd || missing+=(slurmd)
  have srun && have sbatch || missing+=("slurm-client (srun, sbatch)")
  have munged || missing+=(munge)
fi
found_blas=
for d in /usr/lib /usr/lib64 /usr/local/lib /usr/lib/*-linux-gnu; do
  compgen -G "$d/libopenblas.so*" >/dev/null && found_blas=1 && break
done
[ -n "$found_blas" ] || ldconfig -p 2>/dev/null | grep -q libopenblas || missing+=("OpenBLAS (libopenblas)")
if [ ${#missing[@]} -gt 0 ]; then
  (IFS=,; echo "missing: ${missing[*]}; run scripts/setup.sh (Debian/Ubuntu) or install them") >&2
  exit 1
fi
