#!/usr/bin/env bash
# Stops the one-node test cluster that scripts/slurm/up.sh started in the
# same run directory (SLURM_RUN, default runs/slurm): its jobs, then
# slurmd, slurmctld and munged, by their pids. Quiet and exit 0 when none
# runs.
set -uo pipefail
# shellcheck source=scripts/slurm/lib.sh
source "$(dirname "$0")/lib.sh"
slurm_stop_all
exit 0
