#!/usr/bin/env bash
# Isolated mode (Grappa: partitions train alone, only gradients cross
# ranks) against the 4D mini-batch mode (ScaleGNN) and the neighbor mode
# (FastSample), same model, same graph, same ranks, one after the other
# in one run; run it under the timing lock:
#
#   flock /tmp/quiet.lock bash bench/isolated-vs-4d.sh [SCALEGNN] [SCALE]
#
# The graph: R-MAT scale SCALE (default 20: 1,048,576 vertices), edge
# factor 16, F features (default 32: every isolated rank holds the whole
# graph, so the features are kept narrow for 8 ranks on one small
# machine), 32 classes, 1% of the vertices in the training set, prepared
# once into WORK/iso-rmatS-fF-PERMUTE-prepared (one block; PERMUTE
# default single: R-MAT's high-degree vertices have the low ids, and one
# random permutation spreads them over the 3D blocks of the 4D grid and of
# the isolated evaluation grid; every mode maps back to vertex ids) and
# reused. The model: 3 GCN layers F-128-128-32, no dropout, Adam.
#
#  - isolated: every one of NP ranks a worker, CHUNKS chunks (default
#    2·NP, so that a worker's partition, two chunks, holds N/NP vertices
#    as a block of a 1D split would), induced partitions (a 3-hop halo of
#    an R-MAT graph's training vertices is nearly the whole graph), whole
#    partitions (one step and one gradient all-reduce per epoch),
#    correction shrinkage, a super-epoch per epoch, evaluation on a 3D
#    grid of all the ranks (grappa.eval_grid chosen by the model);
#  - 4d: mini-batch on the grid d=2 2x1x(NP/4), MB vertices per replica
#    per step (default N/16), N/(2·MB) steps per epoch;
#  - neighbor: NP workers, SEEDS seeds per rank per step (256), fanouts
#    [15, 10, 5], an epoch every training vertex once as a seed.
#
# Each trains EPOCHS epochs (default 3); the epoch time is the median of
# epoch_s − eval_s over the epochs after the first. It prints, per mode,
# the epoch and step times and the training bytes per epoch (dp, 3D and
# PMM bytes summed over ranks), and `scalegnn perfmodel predict`'s line
# for the mode. Environment: NP (8), EPOCHS (3), WORK (runs), F (32),
# CHUNKS (2·NP), PERMUTE (single),
# SEEDS (256), MB, MPIRUN, LIMIT (seconds per run, 300), MODES (default
# "isolated 4d neighbor"), MACHINE (the perfmodel profile of the
# predictions, default perfmodel/profiles/dev-2core-8ranks.toml when it
# exists). A quick check at scale 14:
#   WORK=/tmp/iso bash bench/isolated-vs-4d.sh ./scalegnn 14
set -u
BIN=${1:-./scalegnn}
SCALE=${2:-20}
NP=${NP:-8}
EPOCHS=${EPOCHS:-3}
WORK=${WORK:-runs}
LIMIT=${LIMIT:-300}
F=${F:-32}
CHUNKS=${CHUNKS:-$((2 * NP))}
if [ -z "${MPIRUN:-}" ]; then
	MPIRUN="$(command -v mpirun.openmpi || echo mpirun) --oversubscribe"
	[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
fi
if [ -z "${MACHINE+x}" ] && [ -f perfmodel/profiles/dev-2core-8ranks.toml ]; then
	MACHINE=perfmodel/profiles/dev-2core-8ranks.toml
fi
PERMUTE=${PERMUTE:-single}
DATA=$(realpath -m "$WORK/iso-rmat$SCALE-f$F-$PERMUTE-prepared")
OUTD=$(realpath -m "$WORK/iso-bench")
mkdir -p "$OUTD"
N=$((1 << SCALE))
SEEDS=${SEEDS:-256}
MB=${MB:-$((N / 16 < 65536 ? N / 16 : 65536))}
if [ ! -f "$DATA/meta.toml" ]; then
	"$BIN" prepare -format rmat -in "scale=$SCALE,edge_factor=16,features=$F,classes=32,seed=1,train_fraction=0.01" \
		-out "$DATA" -blocks 1 -permute "$PERMUTE" || exit 1
fi

job() { # mode, body
	cat <<EOF
[dataset]
source = "prepared"
path = "$DATA"
[model]
layers = 3
hidden = 128
dropout = 0.0
[optimizer]
name = "adam"
lr = 0.01
[permute]
scheme = "$PERMUTE"
seed = 7
[train]
epochs = $EPOCHS
eval_every = 1000
seed = 1
prefetch = true
$2
[output]
dir = "$OUTD/$1"
overwrite = true
EOF
}
job isolated "mode = \"isolated\"
[grid]
d = $NP
[grappa]
partition = \"induced\"
correction = \"shrinkage\"
chunks = $CHUNKS" >"$OUTD/isolated.toml"
job 4d "mode = \"minibatch\"
batch_size = $MB
steps_per_epoch = $((N / (2 * MB)))
[grid]
d = 2
x = 2
y = 1
z = $((NP / 4))" >"$OUTD/4d.toml"
job neighbor "mode = \"neighbor\"
fanouts = [15, 10, 5]
batch_size = $SEEDS
[grid]
d = $NP" >"$OUTD/neighbor.toml"

status=0
for mode in ${MODES:-isolated 4d neighbor}; do
	echo "== $mode: $MPIRUN -np $NP $BIN -config $OUTD/$mode.toml"
	timeout "$LIMIT" $MPIRUN -np "$NP" /usr/bin/time -f "peak_rss_kb %M" "$BIN" -config "$OUTD/$mode.toml" >"$OUTD/$mode.log" 2>&1 || status=1
	grep -E "done|error" "$OUTD/$mode.log" | tail -2; grep -h peak_rss_kb "$OUTD/$mode.log" | sort -k2 -n | tail -1
	"$BIN" perfmodel predict -config "$OUTD/$mode.toml" -ranks "$NP" -top 0 ${MACHINE:+-machine "$MACHINE"} >"$OUTD/$mode.predict" 2>&1
done

python3 - "$OUTD" "$NP" <<'EOF' | tee "$OUTD/table.txt"
import json, statistics, sys
outd, np_ = sys.argv[1], int(sys.argv[2])
want = {"isolated": "isolated %d workers" % np_, "4d": "d=2 2x1x%d" % (np_ // 4), "neighbor": "neighbor Gd=%d" % np_}
for mode in ("isolated", "4d", "neighbor"):
    try:
        ms = [json.loads(l) for l in open(f"{outd}/{mode}/metrics.jsonl")]
    except OSError:
        print(f"{mode:8s} no metrics"); continue
    timed = ms[1:] or ms
    ep = statistics.median(m["epoch_s"] - m.get("eval_s", 0) for m in timed)
    steps = timed[0]["steps"]
    # dp_bytes and comm_3d_bytes are disjoint; pmm_bytes are a part of comm_3d_bytes.
    byts = statistics.median(m.get("dp_bytes", 0) + m.get("comm_3d_bytes", 0) for m in timed)
    build = statistics.median(m.get("sample_s_max", 0) for m in timed)
    pred = ""
    try:
        for line in open(f"{outd}/{mode}.predict"):
            if want[mode] in line:
                pred = line.strip()
    except OSError:
        pass
    chunks = statistics.median(m.get("chunk_bytes", 0) for m in timed)
    print(f"{mode:8s} epoch {ep:.3f} s  {steps} steps  {ep/steps*1e3:.1f} ms/step  build {build:.3f} s/epoch  "
          f"bytes/epoch {byts/1e6:.2f} MB (all ranks)" + (f"  chunk reads/epoch {chunks/1e6:.1f} MB" if chunks else ""))
    print(f"         predicted: {pred or '(not listed by perfmodel predict)'}")
EOF
exit $status
