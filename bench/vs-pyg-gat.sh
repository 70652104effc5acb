#!/usr/bin/env bash
# GPU GAT comparison, measured in one run on one machine: scalegnn's epoch
# of a two-layer GAT (8 heads × 8, one output head; runtime.device =
# "cuda") against PyG's GATConv (bench/gpu_gat.py) on the same GPU and the
# same prepared R-MAT graph. Goal (issue 26): scalegnn <= 0.7x PyG.
#
#   bash bench/vs-pyg-gat.sh SCALEGNN_BINARY [SCALE]
#
# Environment: DEVICE (default cuda; empty: the host CPU), EPOCHS and
# WARMUP (scalegnn's, 25 and 5), PYTHON, WORK (default runs/), OUT (where
# the table and JSON lines go, default WORK).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: bench/vs-pyg-gat.sh SCALEGNN_BINARY [SCALE]}
scale=${2:-20}
work=${WORK:-runs}
out=${OUT:-$work}
device=${DEVICE-cuda}
epochs=${EPOCHS:-25}
warmup=${WARMUP:-5}
py=${PYTHON:-python3}
ds=$work/vs-pyg-rmat$scale-prepared
mkdir -p "$work" "$out"
if [ ! -f "$ds/meta.toml" ]; then
  "$bin" prepare -q -force -format rmat -in "scale=$scale,edge_factor=16,features=128,classes=32,seed=1" \
    -out "$ds" -blocks 1 -permute none || exit 1
fi
job=$work/vs-pyg-gat-rmat$scale.toml
sed -e "s|^path = .*|path = \"$(cd "$ds" && pwd)\"|" -e "s|^dir = .*|dir = \"$work/vs-pyg-gat-rmat$scale\"|" \
  -e "s|^epochs = .*|epochs = $epochs|" bench/rmat20-gat-gpu.toml >"$job"
if [ -z "$device" ]; then sed -i '/^\[runtime\]/,$d' "$job"; fi
"$bin" -config "$job" 2>"$out/vs-pyg-gat-rmat$scale.log"
rc=$?
ours=$("$py" - "$work/vs-pyg-gat-rmat$scale/metrics.jsonl" "$warmup" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2]):]
print(json.dumps({"impl": "scalegnn", "epoch_s_median": statistics.median(r["epoch_s"] - r.get("eval_s", 0) for r in rows)}))
PY
) || rc=1
theirs=$("$py" bench/gpu_gat.py "$ds" ${device:+--device cuda} || true)
[ -n "$device" ] || theirs=$("$py" bench/gpu_gat.py "$ds" --device cpu || true)
{
  echo "$ours"
  echo "$theirs"
  "$py" - "$ours" "$theirs" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2] or "{}")
if "epoch_s_median" in b:
    print("scalegnn %.4f s/epoch, PyG GATConv %.4f s/epoch: ratio %.2f (goal <= 0.7)" % (a["epoch_s_median"], b["epoch_s_median"], a["epoch_s_median"] / b["epoch_s_median"]))
PY
} | tee "$out/vs-pyg-gat-rmat$scale.txt"
exit $rc
