#!/usr/bin/env bash
# GPU speed comparison, all measured in one run on one machine: scalegnn's
# epoch (runtime.device = "cuda") against PyTorch's torch.sparse.mm with a
# CSR adjacency and PyG's GCNConv, on the same GPU and the same graph.
# Goal: scalegnn's epoch <= 0.8x PyG's; in mixed precision (the
# "scalegnn-bf16" row, train.precision = "bf16"; PRECISIONS="float32"
# skips it) <= 0.6x the float32 epoch (issue 28).
#
#   bash bench/vs-pyg.sh SCALEGNN_BINARY [SCALE]
#
# The graph: R-MAT scale SCALE (default 20: 1,048,576 vertices, 16.8M
# generated edges, 32.4M nonzeros of Â), 128 features, 32 classes, seed 1 (as
# bench/rmat16.toml); the model: 3 GCN layers 128-128-128-32, no dropout,
# Adam (bench/rmat20-gpu.toml). Full-graph epochs: forward, backward, Adam.
#
# How:
#  1. `scalegnn prepare -format rmat ... -blocks 1 -permute none` generates
#     and prepares the graph on this machine (nothing large is carried to
#     it). Measured on a 2-core x86 (the CPU build of 2026-11): 18 s wall at
#     scale 20 (1.2 GiB peak memory), 780 MB on disk, most of it the
#     features (512 MiB). That is small beside the 8-minute budget, so the
#     one prepared dataset is what both sides read: scalegnn through
#     dataset.source = "prepared", Python through bench/prepared_load.py
#     (plain .npy, no extra export). Kept in WORK and reused by a rerun of
#     the same scale. On the H100 machine (16 cores) prepare took 19-23 s
#     and the whole script 71 s from scratch at scale 20.
#  2. scalegnn trains EPOCHS epochs (default 25) of the job; the epoch time is
#     the median of epoch_s - eval_s in metrics.jsonl over the epochs after
#     WARMUP (default 5), spmm_s the median of spmm_s_max.
#  3. bench/gpu_gcn.py times IMPLS (default torch-csr,torch-csr-sym,pyg,
#     pyg-sparse): median of 20 epochs after 5 warm-up, each between
#     torch.cuda.synchronize() calls; spmm_s is the aggregation alone, timed
#     separately. See its docstring for what each implementation computes
#     (pyg: GCNConv with the stored Â as edge weights, normalize=False, the
#     same Â bit for bit; PyG multiplies by W before aggregating).
#  4. Prints a table with every epoch and the ratios scalegnn / each, and
#     writes it with every JSON line to $OUT/vs-pyg-rmatS.{txt,jsonl} when
#     OUT is set (else to WORK), with scalegnn's log, summary.json and
#     metrics.jsonl. On a GPU scalegnn's SpMM/GEMM split is host-side
#     launch time (the kernels run asynchronously), so the table shows no
#     SpMM time for it; its epoch time is exact (every step waits for its
#     loss, hence for the step before).
#
# Environment:
#   DEVICE   runtime.device of the job (default cuda); empty: no device key,
#            the binary's default (the host CPU)
#   PYDEV    torch device for gpu_gcn.py (default: cuda when torch sees a
#            GPU, else cpu)
#   EPOCHS, WARMUP  scalegnn's epochs and how many of them to drop (25, 5)
#   PYEPOCHS, PYWARMUP  gpu_gcn.py's timed and warm-up epochs (20, 5)
#   IMPLS    gpu_gcn.py's implementations, comma-separated
#   THREADS  runtime.threads and gpu_gcn.py's --threads (default: theirs)
#   PYTHON   a python3 with torch (default: python3, else /usr/bin/python3,
#            Debian's, which another python3 on PATH may hide)
#   WORK     where the dataset and runs go (default runs/)
#   LIMIT    seconds each stage may take before it is stopped (default 240),
#            so that one stuck stage still leaves the others' numbers
#
# Test on a CPU machine (scale 14, scalegnn and torch on the CPU):
#   DEVICE= IMPLS=torch-csr,torch-csr-sym bash bench/vs-pyg.sh ./scalegnn 14
#
# The exit status is 1 when any stage failed or timed out; the table still
# shows the others.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: bash bench/vs-pyg.sh SCALEGNN_BINARY [SCALE]" >&2
  exit 2
fi
bin=$(realpath "$1")
scale=${2:-20}
[ -x "$bin" ] || { echo "vs-pyg.sh: $1: not an executable scalegnn binary; build one with go build -tags nompi -o scalegnn-nompi ." >&2; exit 2; }
cd "$(dirname "$0")/.."
device=${DEVICE-cuda}
epochs=${EPOCHS:-25}
warmup=${WARMUP:-5}
limit=${LIMIT:-240}
impls=${IMPLS:-torch-csr,torch-csr-sym,pyg,pyg-sparse}
work=$(realpath -m "${WORK:-runs}")
mkdir -p "$work"
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  python3 -c 'import torch' 2>/dev/null || PYTHON=/usr/bin/python3
fi
name=vs-pyg-rmat$scale
ds=$work/$name-prepared
run=$work/$name
job=$work/$name.toml
log=$work/$name.log
dest=$work
if [ -n "${OUT:-}" ]; then
  dest=$OUT
  mkdir -p "$dest"
fi
lines=$dest/$name.jsonl
table=$dest/$name.txt
: >"$lines"
status=0

# say prints a line and keeps it in the table file.
say() { echo "$@" | tee -a "$table"; }
: >"$table"
say "== vs-pyg: R-MAT scale $scale, 3-layer GCN 128 hidden, scalegnn device '${device:-default}', torch device ${PYDEV:-auto}, $(date -u +%FT%TZ)"
command -v nvidia-smi >/dev/null && say "   $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"

# 1. The graph, prepared once per scale.
if [ ! -f "$ds/meta.toml" ]; then
  t0=$(date +%s.%N)
  if ! timeout "$limit" "$bin" prepare -q -force -format rmat \
    -in "scale=$scale,edge_factor=16,features=128,classes=32,seed=1" -out "$ds" -blocks 1 -permute none; then
    say "vs-pyg.sh: scalegnn prepare of $ds failed or took over ${limit}s; nothing to compare"
    exit 1
  fi
  say "prepare: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s -> $ds ($(du -sh "$ds" | cut -f1))"
else
  say "prepare: reusing $ds"
fi

# 2. scalegnn, in each of PRECISIONS (train.precision; default "float32
# bf16"): the float32 run is "scalegnn", the bf16 run "scalegnn-bf16".
for prec in ${PRECISIONS:-float32 bf16}; do
suffix=
[ "$prec" = float32 ] || suffix=-$prec
pjob=$work/$name$suffix.toml prun=$run$suffix plog=$work/$name$suffix.log
sed -e "s|^path = .*|path = \"$ds\"|" -e "s|^dir = .*|dir = \"$prun\"|" -e "s|^epochs = .*|epochs = $epochs|" \
  -e "/^\[train\]/a precision = \"$prec\"" bench/rmat20-gpu.toml >"$pjob"
if [ -n "$device" ]; then
  sed -i "s|^device = .*|device = \"$device\"|" "$pjob"
else
  sed -i '/^device = /d' "$pjob"
fi
[ -n "${THREADS:-}" ] && sed -i "/^\[runtime\]/a threads = $THREADS" "$pjob"
# A failed run must not leave an earlier run's files to be copied as its own.
rm -f "$prun/summary.json" "$prun/metrics.jsonl" "$dest/$name$suffix.summary.json" "$dest/$name$suffix.metrics.jsonl"
t0=$(date +%s.%N)
if timeout "$limit" "$bin" -config "$pjob" 2>"$plog"; then
  say "scalegnn ($prec): $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s for $epochs epochs with loading"
  "$PYTHON" - "$prun/metrics.jsonl" "$warmup" "$device" "scalegnn$suffix" >>"$lines" <<'PY' || status=1
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
warm = int(sys.argv[2])
if len(rows) <= warm:
    sys.exit("vs-pyg.sh: %s has %d epochs, not more than WARMUP = %d; raise EPOCHS" % (sys.argv[1], len(rows), warm))
rows = rows[warm:]
med = lambda k: statistics.median(r[k] for r in rows)
out = {"impl": sys.argv[4], "epoch_s_median": statistics.median(r["epoch_s"] - r["eval_s"] for r in rows),
       "epoch_s_min": min(r["epoch_s"] - r["eval_s"] for r in rows), "epochs": len(rows), "warmup": warm,
       "device": sys.argv[3] or "default", "loss": rows[-1]["loss"]}
# scalegnn times its SpMM and GEMM calls on the host. On a GPU they only
# queue kernels, so the split is launch time, not kernel time, and is kept
# under other names; the epoch itself is right, since every step reads its
# loss back and so waits for the previous step's queued work.
split = "_s_launch" if sys.argv[3].startswith("cuda") else "_s"
for k in ("spmm", "gemm", "other"):
    out[k + split] = med(k + "_s_max")
print(json.dumps(out))
PY
else
  rc=$?
  status=1
  say "scalegnn ($prec): failed (exit $rc; 124: took over ${limit}s); the last lines of $plog:"
  tail -5 "$plog" | tee -a "$table"
fi
cp "$plog" "$dest/" 2>/dev/null || true
[ -f "$prun/summary.json" ] && cp "$prun/summary.json" "$dest/$name$suffix.summary.json"
[ -f "$prun/metrics.jsonl" ] && cp "$prun/metrics.jsonl" "$dest/$name$suffix.metrics.jsonl"
done

# 3. PyTorch and PyG, one process (the dataset is loaded once).
pyargs=(--impl "$impls" --device "${PYDEV:-}" --epochs "${PYEPOCHS:-20}" --warmup "${PYWARMUP:-5}")
[ -n "${THREADS:-}" ] && pyargs+=(--threads "$THREADS")
t0=$(date +%s.%N)
timeout "$limit" "$PYTHON" bench/gpu_gcn.py "$ds" "${pyargs[@]}" >>"$lines" 2>"$work/$name.py.log" || {
  rc=$?
  status=1
  say "gpu_gcn.py: failed (exit $rc; 124: took over ${limit}s; 1: an implementation's error is in the table); the last lines of $work/$name.py.log:"
  tail -5 "$work/$name.py.log" | tee -a "$table"
}
say "gpu_gcn.py: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
cp "$work/$name.py.log" "$dest/" 2>/dev/null || true

# 4. The table.
"$PYTHON" - "$lines" <<'PY' | tee -a "$table"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = {r["impl"]: r for r in rows if "epoch_s_median" in r}
print("%-14s %12s %10s %8s %9s  %s" % ("impl", "epoch ms", "spmm ms", "spmm %", "peak GiB", "adjacency / note"))
for r in rows:
    if "epoch_s_median" not in r:
        print("%-14s %s" % (r["impl"], r.get("skipped") or r.get("error")))
        continue
    e, s = r["epoch_s_median"], r.get("spmm_s")
    print("%-14s %12.2f %10s %8s %9s  %s" % (r["impl"], 1e3 * e, "%.2f" % (1e3 * s) if s is not None else "-",
          "%.0f" % (100 * s / e) if s is not None else "-",
          "%.2f" % r["peak_mem_gib"] if "peak_mem_gib" in r else "-",
          r.get("adj") or r["device"] + ("; no SpMM time: its split is kernel launches" if "spmm_s_launch" in r else "")))
if "scalegnn" in ok:
    base = ok["scalegnn"]["epoch_s_median"]
    for k, r in ok.items():
        if k != "scalegnn":
            print("scalegnn / %-13s %.3f" % (k, base / r["epoch_s_median"]))
    # Mixed precision's goal (issue 28): at most 0.6x the float32 epoch,
    # today's scalegnn (about torch-csr-sym's).
    if "scalegnn-bf16" in ok:
        b = ok["scalegnn-bf16"]["epoch_s_median"]
        for k in ("scalegnn", "torch-csr-sym"):
            if k in ok:
                q = b / ok[k]["epoch_s_median"]
                print("goal scalegnn-bf16 <= 0.6x %s: %.3f -> %s" % (k, q, "met" if q <= 0.6 else "NOT met"))
    # The goal is against GCNConv; PyG's two ways to call it differ
    # several-fold, so both are judged.
    for k, what in (("pyg", "GCNConv on edge_index"), ("pyg-sparse", "GCNConv on a sparse adj_t")):
        if k in ok:
            q = base / ok[k]["epoch_s_median"]
            print("goal scalegnn <= 0.8x PyG (%s): %.3f -> %s" % (what, q, "met" if q <= 0.8 else "NOT met"))
PY
echo "results: $table, $lines"
exit $status
