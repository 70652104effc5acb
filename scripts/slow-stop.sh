#!/bin/bash
# Defect 7 of issue 25: SIGTERM to mpirun while a step takes longer than
# Open MPI's odls_base_sigkill_timeout (1 s). mpirun forwards the SIGTERM
# and kills the ranks 1 s later, before they reach the step boundary where
# they would write the stop's checkpoint. The first signal must still leave
# summary.json "interrupted", naming the newest good checkpoint, which
# -resume latest then continues from.
#
#   scripts/slow-stop.sh            # builds ./scalegnn; SCALEGNN=path to use another
#
# The job: SBM, 400 vertices, 4,096 features, hidden 4,096, 3 layers on
# 2x2x2 (8 ranks; more than 2 s a step on 2 cores), a checkpoint every 2
# epochs; SIGTERM a moment into epoch 3.
set -u
cd "$(dirname "$0")/.."
r=${RUNS:-runs/slow-stop}
rm -rf "$r" && mkdir -p "$r"
bin=${SCALEGNN:-}
if [ -z "$bin" ]; then
  go build -o "$r/scalegnn" . || exit 1
  bin=$r/scalegnn
fi
mpirun=(mpirun)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
mpirun+=(--oversubscribe)
export OMPI_MCA_mpi_yield_when_idle=1
fail() { echo "$(basename "$0"): FAIL: $*"; exit 1; }
cat >"$r/slow.toml" <<TOML
[dataset]
source = "sbm"
seed = 1
[dataset.sbm]
nodes = 400
classes = 8
features = 4096
[model]
layers = 3
hidden = 4096
[train]
epochs = 20
eval_every = 100
[grid]
x = 2
y = 2
z = 2
[checkpoint]
every = 2
[output]
dir = "$r/slow"
TOML
"${mpirun[@]}" -np 8 "$bin" -config "$r/slow.toml" >"$r/slow.log" 2>&1 &
pid=$!
ckpt=$r/slow/checkpoints/ckpt-00000002
for _ in $(seq 1200); do
  [ -e "$ckpt/manifest.json" ] && break
  kill -0 $pid 2>/dev/null || { cat "$r/slow.log"; fail "the job ended before its checkpoint of epoch 2"; }
  sleep 0.05
done
[ -e "$ckpt/manifest.json" ] || fail "no checkpoint of epoch 2 in 60 s"
sleep 0.5 # into epoch 3's step
t0=$(date +%s.%N)
kill -TERM $pid
wait $pid
rc=$?
t1=$(date +%s.%N)
echo "exit $rc, $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s after the SIGTERM to mpirun"
grep -E '"(status|message|checkpoint|epochs_run)"' "$r/slow/summary.json"
grep -E 'stopped by|resume with' "$r/slow.log"
grep -q '"status": "interrupted"' "$r/slow/summary.json" || fail "summary.json is not \"interrupted\""
got=$(sed -n 's/.*"checkpoint": "\(.*\)".*/\1/p' "$r/slow/summary.json")
[ -n "$got" ] && [ -e "$got/manifest.json" ] || fail "summary.json names no checkpoint on disk (\"$got\")"
echo "$(basename "$0"): ok: summary.json is \"interrupted\" and names $got"
