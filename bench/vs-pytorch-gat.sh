#!/usr/bin/env bash
# Side-by-side CPU comparison of a GAT with PyTorch (issue 26): R-MAT scale
# S (default 16) with 128 features and 32 classes, a 2-layer GAT 128 →
# 8 heads × 8 (ELU) → 32 with one output head, no dropout, full graph,
# 1 rank, T threads (default 2); features as generated (Gaussian, not
# row-normalised: bench/rmat16-gat.toml says why). Both read the same prepared dataset; PyTorch (Debian's
# python3-torch) runs bench/pytorch_gat.py's index_select/index_add_ GAT,
# the faster of its two variants.
#
#   bash bench/vs-pytorch-gat.sh [SCALE] [THREADS]
#
# Prints both epoch times (mean of 10 epochs after 2 warm-up epochs), their
# peak resident memory, scalegnn's split into SpMM (the heads' weighted
# aggregation) / GEMM / other (the attention's edge and row operations,
# ELU, loss, Adam), and the ratio scalegnn / PyTorch, all measured in this
# one run. Each timed run holds /tmp/quiet.lock.
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${1:-16}
threads=${2:-2}
# Debian's python3-torch lives under the system Python, which another
# python3 on PATH (pyenv, a venv) may hide.
py=${PYTHON:-/usr/bin/python3}
ds=runs/bench-rmat$scale-prepared
[ -x ./scalegnn ] || go build -o scalegnn .
if [ ! -f "$ds/meta.toml" ]; then
  ./scalegnn prepare -q -force -format rmat -in "scale=$scale,edge_factor=16,features=128,classes=32,seed=1" \
    -out "$ds" -blocks 1 -permute none
fi
job=runs/bench-rmat$scale-gat.toml
out=runs/bench-rmat$scale-gat
sed -e "s|../runs/bench-rmat16-prepared|../$ds|" -e "s|runs/bench-rmat16-gat|$out|" bench/rmat16-gat.toml >"$job"
printf '\n[runtime]\nthreads = %d\n' "$threads" >>"$job"
echo "== scalegnn (R-MAT scale $scale, $threads threads)"
flock /tmp/quiet.lock /usr/bin/time -f '%M' -o "$out.rss" ./scalegnn -config "$job" 2>"$out.log" || { cat "$out.log"; exit 1; }
ours=$("$py" - "$out/metrics.jsonl" "$(tail -1 "$out.rss")" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])][2:]  # skip 2 warm-up epochs
m = lambda k: sum(r[k] for r in rows) / len(rows)
print(json.dumps({"impl": "scalegnn", "epoch_s": m("epoch_s") - m("eval_s"), "spmm_s": m("spmm_s_max"),
                  "gemm_s": m("gemm_s_max"), "other_s": m("other_s_max"), "loss": rows[-1]["loss"],
                  "rss_gib": int(sys.argv[2]) / 2**20}))
PY
)
echo "$ours"
echo "== PyTorch"
theirs=$(cd bench && flock /tmp/quiet.lock /usr/bin/time -f '%M' -o "../$out.torch.rss" \
  "$py" pytorch_gat.py "../$ds" -raw -threads "$threads" -epochs 10 -warmup 2)
echo "$theirs"
"$py" - "$ours" "$theirs" "$(tail -1 "$out.torch.rss")" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
b["rss_gib"] = int(sys.argv[3]) / 2**20
print("epoch  scalegnn %.3f s  pytorch %.3f s  ratio %.3f" % (a["epoch_s"], b["epoch_s"], a["epoch_s"] / b["epoch_s"]))
print("split  scalegnn SpMM %.3f s (%.0f%%)  GEMM %.3f s (%.0f%%)  other %.3f s (%.0f%%)" % tuple(
    v for k in ("spmm_s", "gemm_s", "other_s") for v in (a[k], 100 * a[k] / a["epoch_s"])))
print("peak RSS  scalegnn %.2f GiB  pytorch %.2f GiB" % (a["rss_gib"], b["rss_gib"]))
PY
