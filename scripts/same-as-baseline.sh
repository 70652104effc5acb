#!/usr/bin/env bash
# "No behaviour change" (issue 24): trains the same Cora jobs with an old
# and a new binary and checks that their metrics are identical:
#  - NEW compare -tol 0 (epochs, losses to the bit, accuracies exactly;
#    compare ignores the timing fields: epoch_s, *_s_max, *_s_mean, eval_s);
#  - the deterministic counters compare does not read (steps, pmm_bytes,
#    comm_3d_bytes, dp_bytes, eval_bytes, chunk_bytes) equal line by line
#    (COUNTERS=0 skips this check).
# Jobs: Cora on 1 rank (examples/cora.toml); on 8 ranks: 3D full-graph
# (cora-8), 4D mini-batch (cora-minibatch-8), prepared (cora-prepared,
# after `scalegnn prepare` as make mpitest does, with each binary),
# neighbor (cora-neighbor-8), isolated (cora-isolated, d = 8) and 1.5D
# (cora-15d-8), each with its examples' epochs. Every job file is a copy of
# the example with output.dir (and the prepared path) rewritten.
#
#   BASE=old/scalegnn NEW=./scalegnn scripts/same-as-baseline.sh
#   BASE_RUNS=/work/baseline/runs NEW=./scalegnn scripts/same-as-baseline.sh
#       (BASE_RUNS: the old binary's outputs from an earlier run of this
#       script, OUT/base; the old binary is not run again)
#   JOBS="cora cora-8" ...   only these jobs (names as in the list below)
#   OUT=runs/same-as-baseline (default): OUT/base/NAME, OUT/new/NAME
#   DEVICE=cuda ...          every job with runtime.device = "cuda" (on a
#                            GPU machine; the ranks share its GPUs)
#
# Prints one line a job, OK or DIFF, and exits 1 on any difference or
# failed run. A job takes 5-25 s on 2 cores (8 ranks oversubscribed).
set -uo pipefail
: "${NEW:?set NEW=path/to/new/scalegnn}"
[ -n "${BASE:-}" ] || [ -n "${BASE_RUNS:-}" ] || { echo "set BASE=path/to/old/scalegnn or BASE_RUNS=dir" >&2; exit 2; }
OUT=${OUT:-runs/same-as-baseline}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
NEW=$(abs "$NEW"); [ -n "${BASE:-}" ] && BASE=$(abs "$BASE")
[ -n "${BASE_RUNS:-}" ] && BASE_RUNS=$(abs "$BASE_RUNS")
ex=$(cd "$(dirname "$0")/../examples" && pwd)
mpirun=("$(command -v mpirun.openmpi || echo mpirun)")
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
mpirun+=(--oversubscribe)
# Without it 8 ranks on 2 cores busy-poll (Cora 8 ranks: 153 s instead of 5 s).
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}

# name:ranks:example
all="cora:1:cora cora-8:8:cora-8 cora-minibatch-8:8:cora-minibatch-8 cora-prepared-8:8:cora-prepared
cora-neighbor-8:8:cora-neighbor-8 cora-isolated-8:8:cora-isolated cora-15d-8:8:cora-15d-8"
JOBS=${JOBS:-$(for j in $all; do printf '%s ' "${j%%:*}"; done)}

run() { # side (base|new), binary, name, ranks, example: trains OUT/side/name
  local d=$OUT/$1 n=$3
  mkdir -p "$d" && rm -rf "$d/$n" "$d/$n.log"
  sed -e "s#^dir = .*#dir = \"$d/$n\"#" "$ex/$5.toml" >"$d/$n.toml"
  grep -qx "dir = \"$d/$n\"" "$d/$n.toml" || { echo "no dir line in $5.toml"; return 1; }
  if [ -n "${DEVICE:-}" ]; then
    grep -q '^\[runtime\]' "$d/$n.toml" && { echo "$5.toml has a [runtime] table; DEVICE cannot add one"; return 1; }
    printf '\n[runtime]\ndevice = "%s"\n' "$DEVICE" >>"$d/$n.toml"
  fi
  if [ "$5" = cora-prepared ]; then
    "$2" prepare -q -force -in cora -format builtin -out "$d/cora-prepared" -blocks 3 -permute double -seed 7 >"$d/$n.log" 2>&1 || return 1
    sed -i "s#^path = .*#path = \"$d/cora-prepared\"#" "$d/$n.toml"
  fi
  if [ "$4" = 1 ]; then "$2" -config "$d/$n.toml" >>"$d/$n.log" 2>&1
  else "${mpirun[@]}" -np "$4" "$2" -config "$d/$n.toml" >>"$d/$n.log" 2>&1; fi
}
counters() { # metrics file: the deterministic fields compare does not check
  grep -oE '"(epoch|steps|[a-z0-9_]*_bytes)": ?-?[0-9]+' "$1"
}

bad=0
for n in $JOBS; do
  spec=$(for j in $all; do [ "${j%%:*}" = "$n" ] && echo "$j"; done)
  [ -n "$spec" ] || { echo "unknown job $n (jobs: $all)"; exit 2; }
  IFS=: read -r _ np exname <<<"$spec"
  t0=$(date +%s)
  if [ -n "${BASE_RUNS:-}" ]; then a=$BASE_RUNS/$n
  else a=$OUT/base/$n; run base "$BASE" "$n" "$np" "$exname" || { echo "FAIL $n: old binary (see $a.log)"; bad=1; continue; }
  fi
  b=$OUT/new/$n
  run new "$NEW" "$n" "$np" "$exname" || { echo "FAIL $n: new binary (see $b.log)"; bad=1; continue; }
  t=$(( $(date +%s) - t0 ))
  if ! msg=$("$NEW" compare -tol 0 "$a/metrics.jsonl" "$b/metrics.jsonl" 2>&1); then
    echo "DIFF $n ($np ranks, ${t}s): $msg"; bad=1
  elif [ "${COUNTERS:-1}" != 0 ] && ! cdiff=$(diff <(counters "$a/metrics.jsonl") <(counters "$b/metrics.jsonl") | head -n 4); then
    echo "DIFF $n ($np ranks, ${t}s): counters differ: $(echo $cdiff)"; bad=1
  else
    echo "OK   $n ($np ranks, ${t}s): $msg"
  fi
done
exit $bad
