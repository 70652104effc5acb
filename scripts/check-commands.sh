#!/usr/bin/env bash
# Checks with `command -v` that every command the tests call exists, so
# that a missing install step fails at once with one line per command
# naming it and the Debian package that has it (scripts/setup.sh installs
# them all), not halfway through a test with "command not found".
#
#   scripts/check-commands.sh          make test: the build, mpitest's
#                                      scripts (stall.sh, resume*.sh,
#                                      badinput.sh), mpichtest
#   scripts/check-commands.sh slurm    make slurmtest: those and
#                                      scripts/slurm (the one-node cluster)
#
# Exits 1 when one is missing; silent and 0 when all are there.
set -uo pipefail
# command package
test_cmds="
go Go-1.24-or-newer
make make
git git
pkg-config pkg-config
mpirun.openmpi openmpi-bin
mpirun.mpich mpich
pgrep procps
timeout coreutils
mktemp coreutils
nproc coreutils
seq coreutils
dd coreutils
sed sed
grep grep
awk mawk
"
slurm_cmds="
munged munge
mungekey munge
slurmctld slurmctld
slurmd slurmd
srun slurm-client
sbatch slurm-client
scontrol slurm-client
squeue slurm-client
sinfo slurm-client
scancel slurm-client
setsid util-linux
setpriv util-linux
flock util-linux
cksum coreutils
"
list=$test_cmds
case ${1:-} in
"") ;;
slurm) list="$test_cmds$slurm_cmds" ;;
*) echo "usage: scripts/check-commands.sh [slurm]" >&2; exit 2 ;;
esac
missing=0
while read -r cmd pkg; do
  [ -n "$cmd" ] || continue
  if ! command -v "$cmd" >/dev/null 2>&1; then
    if [ "$cmd" = go ]; then
      echo "missing command: go (install Go 1.24 or newer)" >&2
    else
      echo "missing command: $cmd (Debian package $pkg; scripts/setup.sh installs it)" >&2
    fi
    missing=1
  fi
done <<<"$list"
exit "$missing"
