#!/usr/bin/env bash
# Evaluation speed (issue 27): one full-graph evaluation of the same model
# on the same ranks in each method that evaluates differently, side by
# side in one run; run it under the timing lock:
#
#   flock /tmp/quiet.lock bash bench/eval-speed.sh [SCALEGNN] [SCALE]
#
# The graph: R-MAT scale SCALE (default 19), edge factor 16, 128
# features, 16 classes, prepared once with one random permutation and NP
# blocks into WORK/eval-rmatS. The model: 3 SAGE layers of 128. On NP
# ranks (8), each job trains EVALS epochs (2) and evaluates after each;
# it prints the first evaluation's eval_s (cold: layer-wise evaluation
# reads the graph from the dataset, and every buffer is new) and the
# last's (steady: what every later evaluation of a run costs):
#   3d         full-graph on the 2x2x(NP/4) grid (GRID3D, XxYxZ, another
#              of NP ranks: at scale 20 on 24 GiB, 2 ranks on 2x1x1):
#              the reference;
#   neighbor   NP workers: the layer-by-layer evaluation with the halo exchange;
#   iso-grid   isolated, NP workers, the evaluation grid (grappa.evaluation = "grid");
#   iso-layer  isolated, NP workers, layer-wise (package infer), strips kept.
# It prints each eval_s and its ratio to 3d's (the issue's goal: at most
# 1.5 for neighbor and isolated), and each job's wall time, mpirun to exit. BEFORE=path/to/an/older/scalegnn runs
# 3d, neighbor and isolated on its grid with that binary too, in the same
# run (its isolated job without the keys it predates: grappa.split, grappa.partitions and
# grappa.evaluation), and prints its times beside these. MODES, NP, WORK, MPIRUN as in
# bench/isolated-vs-4d.sh; SEEDS, neighbor mode's seeds per rank (256);
# PARTS trains the isolated jobs in PARTS partitions of one chunk, NP at
# a time (phases: at scale 20 on 2 ranks, PARTS=8 fits where 2 partitions
# of half the graph do not); MEMCHECK=false turns the memory check off (at scale 20 it refuses 8
# ranks on a 24 GiB machine: 3.75 GiB a rank predicted for 3D, while the
# runs fit). A quick check:
#   WORK=/tmp/evs SEEDS=4 bash bench/eval-speed.sh ./scalegnn 12
set -u
BIN=$(realpath "${1:-./scalegnn}")
SCALE=${2:-19}
NP=${NP:-8}
WORK=$(realpath -m "${WORK:-runs}")
if [ -z "${MPIRUN:-}" ]; then
	MPIRUN="$(command -v mpirun.openmpi || echo mpirun) --oversubscribe"
	[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
fi
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
DATA=$WORK/eval-rmat$SCALE
OUTD=$WORK/eval-speed
mkdir -p "$OUTD"
if [ ! -f "$DATA/meta.toml" ]; then
	"$BIN" prepare -q -format rmat -in "scale=$SCALE,edge_factor=16,features=128,classes=16,seed=1,train_fraction=0.01" \
		-out "$DATA" -blocks "$NP" -permute single -seed 7 || exit 1
fi
job() { # name, lines
	cat <<TOML
[dataset]
source = "prepared"
path = "$DATA"
[model]
layers = 3
layer = "sage"
hidden = 128
dropout = 0.0
[permute]
scheme = "single"
seed = 7
[train]
epochs = ${EVALS:-2}
eval_every = 1
seed = 1
$2
[output]
dir = "$OUTD/$1"
overwrite = true
$([ "${MEMCHECK:-true}" = false ] && printf '[runtime]\nmem_check = false')
TOML
}
IFS=x read -r GX GY GZ <<<"${GRID3D:-2x2x$((NP / 4))}"
job 3d "[grid]
x = $GX
y = $GY
z = $GZ" >"$OUTD/3d.toml"
job neighbor "mode = \"neighbor\"
fanouts = [15, 10, 5]
batch_size = ${SEEDS:-256}
[grid]
d = $NP" >"$OUTD/neighbor.toml"
iso="mode = \"isolated\"
[grid]
d = $NP
[grappa]
chunks = ${PARTS:-$NP}
$([ -n "${PARTS:-}" ] && echo "partitions = $PARTS")
split = \"blocks\""
job iso-grid "$iso
evaluation = \"grid\"" >"$OUTD/iso-grid.toml"
job iso-layer "$iso
evaluation = \"layerwise\"" >"$OUTD/iso-layer.toml"
rm -rf "$OUTD"/3d "$OUTD"/neighbor "$OUTD"/iso-grid "$OUTD"/iso-layer "$OUTD"/before-* # no stale run is read back
if [ -n "${BEFORE:-}" ]; then
	BEFORE=$(realpath "$BEFORE")
	for m in 3d neighbor; do
		sed "s|dir = \"$OUTD/$m\"|dir = \"$OUTD/before-$m\"|" "$OUTD/$m.toml" >"$OUTD/before-$m.toml"
	done
	grep -v '^split = \|^evaluation = \|^partitions = ' "$OUTD/iso-grid.toml" | sed "s|dir = \"$OUTD/iso-grid\"|dir = \"$OUTD/before-iso-grid\"|" >"$OUTD/before-iso-grid.toml"
fi
for m in ${MODES:-3d neighbor iso-grid iso-layer}; do
	t0=$(date +%s.%N)
	$MPIRUN -np "$NP" "$BIN" -config "$OUTD/$m.toml" >"$OUTD/$m.log" 2>&1 || { echo "$m failed:"; grep -h "^scalegnn:" "$OUTD/$m.log" | head -1; tail -3 "$OUTD/$m.log"; }
	mkdir -p "$OUTD/$m" && echo "$t0 $(date +%s.%N)" >"$OUTD/$m/job_s"
	if [ -n "${BEFORE:-}" ] && [ -f "$OUTD/before-$m.toml" ]; then
		$MPIRUN -np "$NP" "$BEFORE" -config "$OUTD/before-$m.toml" >"$OUTD/before-$m.log" 2>&1 || { echo "before-$m failed:"; grep -h "^scalegnn:" "$OUTD/before-$m.log" | head -1; tail -3 "$OUTD/before-$m.log"; }
	fi
done
python3 - "$OUTD" <<'PY'
import json, os, sys
out = sys.argv[1]
def evals(prefix):
    ev = {}
    for m in ("3d", "neighbor", "iso-grid", "iso-layer"):
        p = os.path.join(out, prefix + m, "metrics.jsonl")
        rows = [json.loads(l) for l in open(p)] if os.path.exists(p) else []
        rows = [r["eval_s"] for r in rows if r.get("eval_s")]
        if rows:
            ev[m] = (rows[0], rows[-1])
    return ev
def job_s(m):
    # the whole job's wall time, mpirun to exit (setup, training, evaluations)
    p = os.path.join(out, m, "job_s")
    if not os.path.exists(p):
        return ""
    t0, t1 = map(float, open(p).read().split())
    return "   job %.1f s" % (t1 - t0)
def show(t, ref, m, its=""):
    # first and steady evaluation, each with its ratio to 3d's
    return " ".join("%7.2f s%s" % (x, " (%.2fx%s 3d)" % (x / r, its) if r and m != "3d" else "") for x, r in zip(t, ref or (None, None)))
now, before = evals(""), evals("before-")
print("%-10s %s" % ("", "eval: first, steady" + ("   before: first, steady" if before else "")))
for m, t in now.items():
    line = "%-10s %s%s" % (m, show(t, now.get("3d"), m), job_s(m))
    if m in before:
        line += "   before: " + show(before[m], before.get("3d"), m, " its")
    print(line)
PY
