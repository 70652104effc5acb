#!/usr/bin/env bash
# Starts a one-node Slurm cluster on localhost for the tests: munged,
# slurmctld and slurmd from Debian's packages (scripts/setup.sh), with a
# slurm.conf written under runs/slurm (SLURM_RUN). Needs root (slurmd
# starts tasks as the submitting user). A cluster left from an earlier run
# of the same directory is stopped first, and the state starts empty.
# Prints the SLURM_CONF line for the clients:
#
#   scripts/slurm/up.sh && export SLURM_CONF=$PWD/runs/slurm/slurm.conf
#   srun -n 8 ./scalegnn -config job.toml
#   scripts/slurm/down.sh
#
# Slurm does not pass the caller's nice value to the tasks: they run at
# slurmd's priority, which is this script's (nice scripts/slurm/up.sh
# runs the jobs niced). Cold start takes about a second.
set -euo pipefail
# shellcheck source=scripts/slurm/lib.sh
source "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
  slurm_log "up.sh needs root (slurmd runs the tasks as their user)"
  exit 1
fi
for c in munged mungekey slurmctld slurmd scontrol sinfo setpriv; do
  command -v "$c" >/dev/null 2>&1 || { slurm_log "no $c: run scripts/setup.sh"; exit 1; }
done
id munge >/dev/null 2>&1 || { slurm_log "no munge user: run scripts/setup.sh"; exit 1; }

slurm_stop_all
rm -rf "$SLURM_RUN/state" "$SLURM_RUN/spool" "$SLURM_RUN/munge" "$SLURM_RUN"/*.log
mkdir -p "$SLURM_RUN/state" "$SLURM_RUN/spool" "$SLURM_RUN/munge"
# The only file in /etc: munge's key (the munge package makes it; make
# one if it is gone).
key=/etc/munge/munge.key
if [ ! -s "$key" ]; then
  slurm_log "creating $key"
  mkdir -p /etc/munge && chown munge:munge /etc/munge && chmod 700 /etc/munge
  mungekey --create --keyfile="$key"
  chown munge:munge "$key" && chmod 600 "$key"
fi

cat >"$SLURM_CONF" <<EOF
# Written by scripts/slurm/up.sh: a one-node cluster on localhost for the
# tests. Everything it writes is under $SLURM_RUN.
ClusterName=scalegnn-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$SLURM_CTLD_PORT
SlurmdPort=$SLURM_D_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$SLURM_RUN/state
SlurmdSpoolDir=$SLURM_RUN/spool
SlurmctldPidFile=$SLURM_RUN/slurmctld.daemon.pid
SlurmdPidFile=$SLURM_RUN/slurmd.daemon.pid
SlurmctldLogFile=$SLURM_RUN/slurmctld.log
SlurmdLogFile=$SLURM_RUN/slurmd.log
SlurmctldDebug=info
SlurmdDebug=${SLURMD_DEBUG:-info}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=pmix
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
KillWait=10
OverTimeLimit=0
InactiveLimit=0
MinJobAge=600
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$SLURM_NODE NodeAddr=127.0.0.1 CPUs=$SLURM_CPUS Sockets=1 CoresPerSocket=$SLURM_CPUS ThreadsPerCore=1 State=UNKNOWN
PartitionName=test Nodes=$SLURM_NODE Default=YES MaxTime=INFINITE State=UP
EOF

# A port already taken (another cluster, say) fails here with one line.
for port in "$SLURM_CTLD_PORT" "$SLURM_D_PORT"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    slurm_log "port $port is in use; set SLURM_CTLD_PORT to a free pair of ports"
    exit 1
  fi
done

# The daemons run in the foreground of their own sessions, so that $! is
# their pid (down.sh stops them by it) and a terminal's Ctrl-C does not
# reach them; SCALEGNN_SLURM_RUN marks them and their slurmstepds.
export SCALEGNN_SLURM_RUN=$SLURM_RUN
chown munge:munge "$SLURM_RUN/munge" && chmod 755 "$SLURM_RUN/munge" # munged wants it searchable by all
setsid setpriv --reuid=munge --regid=munge --init-groups \
  munged --foreground --socket="$munge_socket" --key-file="$key" \
  --pid-file="$SLURM_RUN/munge/munged.pid" --seed-file="$SLURM_RUN/munge/munged.seed" \
  --log-file="$SLURM_RUN/munge/munged.log" </dev/null >>"$SLURM_RUN/munged.out" 2>&1 &
echo $! >"$SLURM_RUN/munged.pid"
for _ in $(seq 100); do [ -S "$munge_socket" ] && break; sleep 0.05; done
[ -S "$munge_socket" ] || { slurm_log "munged did not start:"; cat "$SLURM_RUN/munged.out" "$SLURM_RUN/munge/munged.log" >&2 2>/dev/null; slurm_stop_all; exit 1; }

setsid slurmctld -D -i -f "$SLURM_CONF" </dev/null >>"$SLURM_RUN/slurmctld.out" 2>&1 &
echo $! >"$SLURM_RUN/slurmctld.pid"
setsid slurmd -D -N "$SLURM_NODE" -f "$SLURM_CONF" </dev/null >>"$SLURM_RUN/slurmd.out" 2>&1 &
echo $! >"$SLURM_RUN/slurmd.pid"
unset SCALEGNN_SLURM_RUN

# Ready when the node is idle (bounded: 30 s).
state=
for _ in $(seq 300); do
  state=$(timeout 5 sinfo -h -n "$SLURM_NODE" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  for d in munged slurmctld slurmd; do
    slurm_alive "$(cat "$SLURM_RUN/$d.pid")" || { state="$d exited"; break 2; }
  done
  sleep 0.1
done
if [ "$state" != idle ]; then
  slurm_log "the cluster did not come up (node: ${state:-no answer}); logs:"
  tail -n 20 "$SLURM_RUN"/*.out "$SLURM_RUN"/*.log >&2 2>/dev/null || true
  slurm_stop_all
  exit 1
fi
slurm_log "up: $SLURM_NODE idle, $SLURM_CPUS CPUs, port $SLURM_CTLD_PORT ($(nice) nice); export SLURM_CONF=$SLURM_CONF"
