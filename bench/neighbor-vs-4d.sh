#!/usr/bin/env bash
# Neighbor mode (FastSample's distributed neighbor sampling) against the
# 4D mini-batch mode (ScaleGNN's vertex sampling), same model, same graph,
# same ranks, one after the other in one run:
#
#   bash bench/neighbor-vs-4d.sh [SCALEGNN] [SCALE]
#
# The graph: R-MAT scale SCALE (default 20: 1,048,576 vertices, 32.4M
# nonzeros of Â), 128 features, 32 classes, 1% of the vertices in the
# training set (10,485 at scale 20), prepared once into
# WORK/nb-rmatS-prepared (no permutation, one block) and reused. The
# model: 3 SAGE layers 128-128-128-32, no dropout, Adam.
#
#  - neighbor: every one of NP ranks a worker, 256 seeds per rank per
#    step, fanouts [15, 10, 5], prefetch; an epoch is every training
#    vertex once as a seed: ceil(train / (NP·256)) steps.
#  - 4d: mini-batch on the grid d=2 2x1x2 (what `perfmodel predict -d 2`
#    ranks first at scale 20; d=8 1x1x1 needs 7.6 GiB a rank), MB
#    vertices per replica per step, steps_per_epoch = N / (2·MB), so an
#    epoch also holds every training vertex once in expectation. Its
#    full-graph evaluation arenas make it the larger job: 1.24 GiB peak a
#    rank at scale 18, so about 5 GiB at scale 20, 40 GiB for 8 ranks; on
#    the 23 GiB development machine the comparison runs at scale 18 (make
#    bench) and the neighbor mode alone at scale 20 (MODES=neighbor).
#
# Each trains EPOCHS epochs (default 3); the epoch time is the median of
# epoch_s − eval_s over the epochs after the first (the first warms up;
# the last one evaluates, and eval_s is taken out). It prints, per mode,
# the epoch and step times, the sampling time, the training bytes per
# step (dp_bytes, summed over ranks, over steps and ranks), and beside
# them `scalegnn perfmodel predict`'s lines for the job, then the ratio
# 4d / neighbor. Logs, metrics and the table go to WORK/nb-bench (WORK
# default runs).
#
# Environment: NP (8), EPOCHS (3), WORK (runs), SEEDS (seeds per rank,
# 256), MB (4D vertices per replica per step, min(65536, N/16)), MPIRUN
# (mpirun, with --allow-run-as-root as root and --oversubscribe), LIMIT
# (seconds per run, default 400), GRID4D (the 4D grid "d x y z"), MODES (default "neighbor 4d";
# TABLE_ONLY=1 runs none and prints the table of the last runs), MACHINE (the perfmodel profile of the
# predictions, default perfmodel/profiles/dev-2core-8ranks.toml when it
# exists). A quick check of the script at scale 14:
#   SEEDS=16 WORK=/tmp/nb bash bench/neighbor-vs-4d.sh ./scalegnn 14
set -u
BIN=${1:-./scalegnn}
SCALE=${2:-20}
NP=${NP:-8}
EPOCHS=${EPOCHS:-3}
WORK=${WORK:-runs}
LIMIT=${LIMIT:-400}
if [ -z "${MPIRUN:-}" ]; then
	MPIRUN="$(command -v mpirun.openmpi || echo mpirun) --oversubscribe"
	[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
fi
if [ -z "${MACHINE+x}" ] && [ -f perfmodel/profiles/dev-2core-8ranks.toml ]; then
	MACHINE=perfmodel/profiles/dev-2core-8ranks.toml
fi
DATA=$(realpath -m "$WORK/nb-rmat$SCALE-prepared")
OUTD=$(realpath -m "$WORK/nb-bench")
mkdir -p "$OUTD"
N=$((1 << SCALE))
SEEDS=${SEEDS:-256}
MB=${MB:-$((N / 16 < 65536 ? N / 16 : 65536))}
# The 4D grid: GRID4D="d x y z" (default "2 2 1 NP/4"); at scale 20 on the
# 23 GiB machine "1 2 2 2" fits where d=2 does not.
read -r D4 X4 Y4 Z4 <<<"${GRID4D:-2 2 1 $((NP / 4))}"
if [ ! -f "$DATA/meta.toml" ]; then
	"$BIN" prepare -format rmat -in "scale=$SCALE,edge_factor=16,features=128,classes=32,seed=1,train_fraction=0.01" \
		-out "$DATA" -blocks "${BLOCKS:-1}" -permute none || exit 1
fi

if [ -z "${TABLE_ONLY:-}" ]; then
common() {
	cat <<EOF
[dataset]
source = "prepared"
path = "$DATA"
[model]
layers = 3
hidden = 128
dropout = 0.0
layer = "sage"
[optimizer]
name = "adam"
lr = 0.01
[train]
epochs = $EPOCHS
eval_every = 1000
seed = 1
prefetch = true
EOF
}
{
	common
	cat <<EOF
mode = "neighbor"
fanouts = [15, 10, 5]
batch_size = $SEEDS
[grid]
d = $NP
x = 1
y = 1
z = 1
[output]
dir = "$OUTD/neighbor"
overwrite = true
EOF
} >"$OUTD/neighbor.toml"
{
	common
	cat <<EOF
mode = "minibatch"
batch_size = $MB
steps_per_epoch = $((N / (D4 * MB)))
[grid]
d = $D4
x = $X4
y = $Y4
z = $Z4
[output]
dir = "$OUTD/4d"
overwrite = true
EOF
} >"$OUTD/4d.toml"
fi

status=0
[ -n "${TABLE_ONLY:-}" ] && MODES=" "
for mode in ${MODES:-neighbor 4d}; do
	echo "== $mode: $MPIRUN -np $NP $BIN -config $OUTD/$mode.toml"
	timeout "$LIMIT" $MPIRUN -np "$NP" /usr/bin/time -f "peak_rss_kb %M" "$BIN" -config "$OUTD/$mode.toml" >"$OUTD/$mode.log" 2>&1 || status=1
	grep -E "done|error" "$OUTD/$mode.log" | tail -2; grep -h peak_rss_kb "$OUTD/$mode.log" | sort -k2 -n | tail -1
	"$BIN" perfmodel predict -config "$OUTD/$mode.toml" -ranks "$NP" -top 0 ${MACHINE:+-machine "$MACHINE"} >"$OUTD/$mode.predict" 2>&1
done

python3 - "$OUTD" "$NP" "$D4" "$X4" "$Y4" "$Z4" <<'EOF' | tee "$OUTD/table.txt"
import json, re, statistics, sys
outd, np_ = sys.argv[1], int(sys.argv[2])
d4, x4, y4, z4 = (int(a) for a in sys.argv[3:7])
grid4d = ("d=%d " % d4 if d4 > 1 else "") + "%dx%dx%d" % (x4, y4, z4)  # perfmodel.GridString
rows = {}
for mode in ("neighbor", "4d"):
    try:
        ms = [json.loads(l) for l in open(f"{outd}/{mode}/metrics.jsonl")]
    except OSError:
        print(f"{mode}: no metrics"); continue
    timed = ms[1:] or ms
    ep = statistics.median(m["epoch_s"] - m.get("eval_s", 0) for m in timed)
    steps = timed[0]["steps"]
    # Training bytes: dp (neighbor: exchange and gradients) and the 3D
    # group's (pmm_bytes are a part of them), from epochs that did not
    # evaluate where there are such (4D counts evaluation in comm_3d).
    clean = [m for m in timed if not m.get("eval_s")] or timed
    byts = statistics.median(m.get("dp_bytes", 0) + m.get("comm_3d_bytes", 0) for m in clean)
    samp = statistics.median(m.get("sample_s_max", 0) for m in timed)
    wait = statistics.median(m.get("sample_wait_s_max", 0) for m in timed)
    want = {"neighbor": "neighbor Gd=%d" % np_, "4d": grid4d}[mode]
    pred = ""
    for line in open(f"{outd}/{mode}.predict"):
        if want in line:
            pred = line.strip()
    rows[mode] = ep
    print(f"{mode:8s} epoch {ep:.3f} s  {steps} steps  {ep/steps*1e3:.1f} ms/step  build {samp/steps*1e3:.1f} ms/step "
          f"(waited {wait/steps*1e3:.1f})  bytes/step/rank {byts/steps/np_/1e6:.2f} MB  eval {ms[-1].get('eval_s', 0):.2f} s")
    print(f"         predicted: {pred or '(not listed by perfmodel predict)'}")
if len(rows) == 2:
    print(f"4d / neighbor epoch time: {rows['4d']/rows['neighbor']:.2f}")
EOF
exit $status
