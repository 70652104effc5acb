# Sourced by scripts/slurm/up.sh, down.sh and test.sh: where the one-node
# test cluster lives and how to find and stop what it started.
#
# Everything is under SLURM_RUN (default runs/slurm of the repository):
# slurm.conf, the daemons' logs, pid files, state and spool, and munge's
# socket. Nothing goes in /etc beyond munge's key (/etc/munge/munge.key,
# which the munge package creates). The ports come from the run
# directory's path, so two clones can run their clusters side by side.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SLURM_RUN=${SLURM_RUN:-$repo/runs/slurm}
mkdir -p "$SLURM_RUN"
SLURM_RUN=$(cd "$SLURM_RUN" && pwd)
export SLURM_CONF=$SLURM_RUN/slurm.conf
# The node: more CPUs than the machine has (config_overrides), enough for
# the tests side by side: four jobs of examples/slurm/one-node.sbatch (8
# tasks of 4 CPUs each) and four 8-rank steps.
SLURM_NODE=${SLURM_NODE:-node0}
SLURM_CPUS=${SLURM_CPUS:-192}
if [ -z "${SLURM_CTLD_PORT:-}" ]; then
  sum=$(printf '%s' "$SLURM_RUN" | cksum | cut -d' ' -f1)
  SLURM_CTLD_PORT=$((20000 + (sum % 5000) * 2))
fi
SLURM_D_PORT=$((SLURM_CTLD_PORT + 1))
munge_socket=$SLURM_RUN/munge/munge.socket.2

slurm_log() { echo "slurm: $*" >&2; }

# slurm_descendants PID: PID's children, grandchildren, ... (deepest last).
slurm_descendants() {
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do
    echo "$c"
    slurm_descendants "$c"
  done
}

# slurm_ours PID: true when PID is a daemon (or a slurmstepd) that this
# cluster started: the daemons run with SCALEGNN_SLURM_RUN=$SLURM_RUN in
# their environment, which slurmstepd inherits.
slurm_ours() {
  grep -qzxF "SCALEGNN_SLURM_RUN=$SLURM_RUN" "/proc/$1/environ" 2>/dev/null
}

# slurm_alive PID: running (a zombie, which a container's init may never
# reap, counts as gone).
slurm_alive() {
  local st
  st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ]
}

# slurm_stop_pid PID: TERM, then KILL after 1 s (slurmctld takes 8 s to
# stop on TERM; its state is not kept); its descendants (a slurmstepd's
# tasks) get KILL first.
slurm_stop_pid() {
  local pid=$1 kids i
  slurm_alive "$pid" || return 0
  kids=$(slurm_descendants "$pid")
  # shellcheck disable=SC2086
  [ -n "$kids" ] && kill -KILL $kids 2>/dev/null
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 10); do
    slurm_alive "$pid" || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
  return 0
}

# slurm_stop_all: stops this cluster's daemons: the ones named in the pid
# files, then any process left with this cluster's mark (a daemon whose
# pid file is gone, slurmstepd and its tasks). Quiet when none runs.
slurm_stop_all() {
  local f pid p comm
  # Jobs first, while slurmctld can still end them (quietly, bounded).
  if [ -f "$SLURM_RUN/slurmctld.pid" ] && kill -0 "$(cat "$SLURM_RUN/slurmctld.pid")" 2>/dev/null &&
    [ -n "$(timeout 5 squeue -h -o %i 2>/dev/null)" ]; then
    timeout 5 scancel --full --signal=KILL --user=root >/dev/null 2>&1 || true
  fi
  for f in slurmd slurmctld munged; do
    [ -f "$SLURM_RUN/$f.pid" ] || continue
    pid=$(cat "$SLURM_RUN/$f.pid")
    if [ -n "$pid" ] && slurm_ours "$pid"; then
      slurm_stop_pid "$pid"
    fi
    rm -f "$SLURM_RUN/$f.pid"
  done
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    comm=
    read -r comm 2>/dev/null <"$p/comm" || continue
    case $comm in slurm* | munged) slurm_ours "$pid" && slurm_stop_pid "$pid" ;; esac
  done
  return 0
}
