#!/usr/bin/env bash
# Side-by-side CPU comparison with PyTorch on one graph and model (issue 11):
# R-MAT scale S (default 16) with 128 features and 32 classes, a 3-layer GCN
# 128-128-128-32 without dropout, 1 rank, T threads (default 2). Both read
# the same prepared dataset; PyTorch needs Debian's python3-torch.
#
#   bash bench/vs-pytorch.sh [SCALE] [THREADS]
#
# Prints both epoch times, their split into SpMM / GEMM / other, and the
# ratio scalegnn / PyTorch, all measured in this one run.
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
job=runs/bench-rmat$scale.toml
sed -e "s|../runs/bench-rmat16-prepared|../$ds|" -e "s|runs/bench-rmat16|runs/bench-rmat$scale|" bench/rmat16.toml >"$job"
printf '\n[runtime]\nthreads = %d\n' "$threads" >>"$job"
echo "== scalegnn (R-MAT scale $scale, $threads threads)"
./scalegnn -config "$job" 2>"runs/bench-rmat$scale.log" || { cat "runs/bench-rmat$scale.log"; exit 1; }
ours=$("$py" - "runs/bench-rmat$scale/metrics.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])][2:]  # skip 2 warm-up epochs
m = lambda k: sum(r[k] for r in rows) / len(rows)
print(json.dumps({"impl": "scalegnn", "epoch_s": m("epoch_s") - m("eval_s"), "spmm_s": m("spmm_s_max"),
                  "gemm_s": m("gemm_s_max"), "other_s": m("other_s_max")}))
PY
)
echo "$ours"
echo "== PyTorch"
theirs=$("$py" bench/pytorch_gcn.py "$ds" -threads "$threads" -epochs 10)
echo "$theirs"
"$py" - "$ours" "$theirs" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print("epoch  scalegnn %.3f s  pytorch %.3f s  ratio %.2f" % (a["epoch_s"], b["epoch_s"], a["epoch_s"] / b["epoch_s"]))
for k in ("spmm_s", "gemm_s", "other_s"):
    print("%-6s scalegnn %.3f s (%4.1f%%)  pytorch %.3f s (%4.1f%%)" % (k[:-2], a[k], 100 * a[k] / a["epoch_s"], b[k], 100 * b[k] / b["epoch_s"]))
PY
