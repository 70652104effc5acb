#!/usr/bin/env bash
# Exact resume after a stop part-way through an epoch (issue 24), under
# mpirun on 8 ranks, for every training method:
#   3d          full-graph 3D, examples/cora-8.toml (1 step an epoch)
#   4d-mb       4D mini-batch, examples/cora-minibatch-8.toml (d = 2, 2 steps)
#   neighbor    examples/cora-neighbor-8.toml (d = 8, 2 steps)
#   isolated    examples/cora-isolated.toml with batch_size = 8 (several steps)
#   15d         1.5D full-graph, examples/cora-15d-8.toml (1 step)
#   15d-mb      1.5D mini-batch, testdata/mpi/cora-15d-minibatch-8.toml (d = 2, 2 steps)
# For each, on the first E epochs: the uninterrupted run is the reference;
# the same job with [checkpoint] every = 10 is stopped with SIGTERM to all
# its ranks once its metrics file has K lines (the ranks agree at the next
# step boundary and write a checkpoint there, part-way through an epoch or
# after its last step, before the epoch's metrics line), resumed with
# -resume latest, and its metrics must equal the reference's (compare -tol
# 0). A multi-step method whose stop lands after an epoch's last step is
# stopped again (up to TRIES times, later each time) to land mid-epoch;
# the line printed says where the checkpoint was (its manifest: epochs
# completed, steps of the epoch under way, global step). Every method runs
# even when one fails; the exit status is 1 if any did.
#
#   scripts/resume-midepoch.sh [BINARY]     (default ./scalegnn; ~1-2 min)
#   METHODS="4d-mb neighbor" scripts/resume-midepoch.sh   only these
#   E=30 K=4 TRIES=4 ISO_BATCH=8: epochs, metrics lines before the signal,
#   stops tried to land mid-epoch, isolated batch_size (0: the example's)
set -uo pipefail
E=${E:-30}
K=${K:-4}
TRIES=${TRIES:-4}
ISO_BATCH=${ISO_BATCH:-8} # isolated: train.batch_size (0: one step an epoch, the example's)
r=runs/resume-midepoch
SCALEGNN=${1:-${SCALEGNN:-./scalegnn}}
. "$(dirname "$0")/resume-lib.sh"
# Without it 8 ranks on 2 cores busy-poll (Cora 8 ranks: 153 s instead of 5 s).
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
all="3d 4d-mb neighbor isolated 15d 15d-mb"
METHODS=${METHODS:-$all}

base_of() {
  case $1 in
    3d) echo examples/cora-8.toml ;; 4d-mb) echo examples/cora-minibatch-8.toml ;;
    neighbor) echo examples/cora-neighbor-8.toml ;; isolated) echo examples/cora-isolated.toml ;;
    15d) echo examples/cora-15d-8.toml ;; 15d-mb) echo testdata/mpi/cora-15d-minibatch-8.toml ;;
    *) return 1 ;;
  esac
}
tweak() { # method, job file: what the method changes in its example
  case $1 in
    isolated) [ "$ISO_BATCH" = 0 ] || sed -i "s/^mode = \"isolated\"/&\nbatch_size = $ISO_BATCH/" "$2" ;; # several steps an epoch
  esac
}
num() { # key, JSON file: the first number under key
  grep -oE "\"$1\": *-?[0-9.eE+-]+" "$2" | head -n 1 | sed 's/.*: *//'
}
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
waitlines() { # file, n, pid: wait until file has n lines while pid runs
  for _ in $(seq 1200); do [ "$(lines "$1")" -ge "$2" ] && return 0; kill -0 "$3" 2>/dev/null || return 1; sleep 0.02; done; return 1
}

bad=0
for m in $METHODS; do
  b=$(base_of $m) || { echo "unknown method $m (methods: $all)"; exit 2; }
  t0=$(date +%s)
  job $m-ref "$b" '' && tweak $m $r/$m-ref.toml
  "${mpirun[@]}" -np 8 "$bin" -config $r/$m-ref.toml >$r/$m-ref.log 2>&1 || { cat $r/$m-ref.log; echo "FAIL $m: uninterrupted run"; bad=1; continue; }
  steps=$(num steps $r/$m-ref/metrics.jsonl)
  job $m "$b" '[checkpoint]\nevery = 10\n' && tweak $m $r/$m.toml
  where="" k=$K
  for try in $(seq "$TRIES"); do
    rm -rf $r/$m $r/$m.log
    "${mpirun[@]}" -np 8 "$bin" -config $r/$m.toml >$r/$m.log 2>&1 &
    pid=$!
    waitlines $r/$m/metrics.jsonl $k $pid
    [ "$try" -gt 1 ] && sleep "0.0$((try * 7 % 10))" # land elsewhere in the epoch than the try before
    ranks=$(pgrep -P $pid)
    [ -n "$ranks" ] && kill -TERM $ranks 2>/dev/null
    wait $pid && { where="finished before the signal"; k=2; continue; }
    grep -q '"status": "interrupted"' $r/$m/summary.json 2>/dev/null || { where="no interrupted summary"; continue; }
    ck=$(sed -n 's/.*"checkpoint": *"\([^"]*\)".*/\1/p' $r/$m/summary.json | head -n 1)
    [ -f "$ck/manifest.json" ] || { where="no checkpoint manifest ($ck)"; continue; }
    ep=$(num epoch $ck/manifest.json) es=$(num epoch_steps $ck/manifest.json) st=$(num step $ck/manifest.json)
    where="checkpoint $(basename "$ck"): epoch $((ep + 1)) stopped after step $es of $steps (global step $st, try $try)"
    if [ "$es" -gt 0 ] && [ "$es" -lt "$steps" ]; then where+=", mid-epoch"; break; fi
    [ "$steps" -gt 1 ] || { where+=", the epoch's only step done, not yet logged"; break; }
    where+=", after the epoch's last step"
    k=$((k + 3))
  done
  case $where in checkpoint*) ;; *) cat $r/$m.log; echo "FAIL $m: $where"; bad=1; continue ;; esac
  "${mpirun[@]}" -np 8 "$bin" -config $r/$m.toml -resume latest >$r/$m-resume.log 2>&1 || { cat $r/$m-resume.log; echo "FAIL $m: resume ($where)"; bad=1; continue; }
  grep -q "resuming.*$(basename "$ck")" $r/$m-resume.log || { echo "FAIL $m: did not resume from $(basename "$ck")"; bad=1; continue; }
  if msg=$("$bin" compare -tol 0 $r/$m-ref/metrics.jsonl $r/$m/metrics.jsonl 2>&1); then
    echo "OK   $m ($where; $(( $(date +%s) - t0 )) s): $msg"
  else
    echo "FAIL $m ($where; $(( $(date +%s) - t0 )) s): $msg"; bad=1
  fi
done
exit $bad
