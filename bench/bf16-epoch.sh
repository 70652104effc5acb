#!/usr/bin/env bash
# Mixed precision against float32 on the CPU, one epoch at a time (issue
# 28), side by side in one run:
#
#   bash bench/bf16-epoch.sh [ROUNDS]
#
# The job: R-MAT scale 18 (262,144 vertices, edge factor 16, 128
# features, 32 classes), prepared once into runs/bench-rmat18-prepared
# as bench/vs-pytorch.sh prepares its graph, a 3-layer GCN
# 128-128-128-32 without dropout (DROPOUT, default 0.0; the PyTorch model
# has none, so DROPOUT other than 0 skips it; LAYER=sage trains
# GraphSAGE-mean layers instead, and skips PyTorch too), Adam, one rank
# on 2 threads (THREADS),
# EPOCHS epochs (12) without evaluation. The script builds scalegnn and
# spmm/cpu's test binary, then under the timing lock (LOCK, default
# /tmp/quiet.lock; LOCK= runs without one) runs ROUNDS rounds (default 2),
# each: a STREAM triad and the bf16 kernels (BenchmarkBF16, 3 iterations:
# the bandwidth of this moment), then the job in float32 and in bf16
# (train.precision), and bench/pytorch_gcn.py's model on the same
# prepared graph in Debian's PyTorch (float32, its best CSR form; PYTHON,
# default /usr/bin/python3; PYTORCH=0 skips it), each under
# /usr/bin/time -v. It prints each round's triad and kernel line (the
# SpMMs' GB/s as % of the triad, spmm/cpu's count of their bytes), then
# per run the median epoch after the first and its SpMM, GEMM and other
# time (metrics.jsonl: the model's products as the model sees them, so
# bf16's packing of operands counts), the peak RSS, and the ratios of
# bf16 to float32 in the same round.
#
# OpenBLAS 0.3.21 picks its generic "Prescott" kernels on recent Intel
# CPUs; unless OPENBLAS_CORETYPE is set, the script sets SkylakeX (or
# Haswell without AVX-512) when that happens, as bench/bf16-kernels.sh.
set -euo pipefail
ROUNDS=${1:-${ROUNDS:-2}}
LOCK=${LOCK-/tmp/quiet.lock}
THREADS=${THREADS:-2}
EPOCHS=${EPOCHS:-12}
DROPOUT=${DROPOUT:-0.0}
LAYER=${LAYER:-gcn}
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
nice -n 10 go build -o "$TMP/scalegnn" .
nice -n 10 go test -c -o "$TMP/cpu.test" ./spmm/cpu
if [ -z "${OPENBLAS_CORETYPE:-}" ] && "$TMP/cpu.test" -test.run '^TestBLASConfig$' -test.v 2>&1 | grep -q 'core=Prescott'; then
	if grep -qw avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX; else export OPENBLAS_CORETYPE=Haswell; fi
	echo "OpenBLAS picked Prescott: running with OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
fi
DS=$(realpath -m runs/bench-rmat18-prepared)
if [ ! -f "$DS/meta.toml" ]; then
	nice -n 10 "$TMP/scalegnn" prepare -q -force -format rmat -in "scale=18,edge_factor=16,features=128,classes=32,seed=1" \
		-out "$DS" -blocks 1 -permute none
fi
PY=${PYTHON:-/usr/bin/python3}
PYTORCH=${PYTORCH:-1}
if [ "$DROPOUT" != 0 ] && [ "$DROPOUT" != 0.0 ] || [ "$LAYER" != gcn ]; then
	PYTORCH=0 # bench/pytorch_gcn.py is a GCN without dropout
fi
job() { # precision dir
	cat <<TOML
[dataset]
source = "prepared"
path = "$DS"
[model]
layer = "$LAYER"
layers = 3
hidden = 128
dropout = $DROPOUT
[optimizer]
name = "adam"
lr = 0.01
[train]
epochs = $EPOCHS
eval_every = 100000
precision = "$1"
[runtime]
threads = $THREADS
[output]
dir = "$2"
overwrite = true
TOML
}
rounds() {
	for r in $(seq 1 "$ROUNDS"); do
		"$TMP/cpu.test" -test.run '^$' -test.bench '^BenchmarkBF16$' -test.benchtime 3x -test.v 2>/dev/null |
			awk -v r="$r" '/^BenchmarkBF16\// && NF > 10 { for (i = 3; i < NF; i += 2) m[$(i+1)] = $i
				printf "round %d: triad %.1f GB/s; kernels: SpMM f32 %.1f ms (%.0f%% of triad), bf16 %.1f ms (%.2fx, %.0f%% of triad); X·W sgemm %.1f ms, bf16 %.1f ms (%.2fx)\n",
					r, m["triad-GB/s"], m["spmm-f32-ms"], m["spmm-f32-%triad"], m["spmm-bf16-f32-ms"], m["spmm-bf16-f32-x"], m["spmm-bf16-f32-%triad"],
					m["sgemm-ms"], m["gemm-bf16-ms"], m["gemm-bf16-x"] }' |
			tee -a "$TMP/triad"
		for p in float32 bf16; do
			dir="$TMP/run-$r-$p"
			job "$p" "$dir" >"$TMP/job-$p.toml"
			/usr/bin/time -v "$TMP/scalegnn" -config "$TMP/job-$p.toml" >/dev/null 2>"$TMP/log-$r-$p" ||
				{ tail -5 "$TMP/log-$r-$p" >&2; exit 1; }
			rss=$(awk '/Maximum resident set size/ { print $NF }' "$TMP/log-$r-$p")
			triad=$(tail -1 "$TMP/triad" | sed 's/.*triad \([0-9.]*\) GB.*/\1/')
			python3 - "$dir/metrics.jsonl" "$p" "$r" "$rss" "$triad" <<'PY'
import json, statistics, sys
path, prec, rnd, rss, triad = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
ms = [json.loads(l) for l in open(path)][1:]
med = lambda k: statistics.median(m[k] for m in ms)
print(json.dumps({"round": int(rnd), "precision": prec, "epoch_s": med("epoch_s"), "spmm_s": med("spmm_s_max"),
                  "gemm_s": med("gemm_s_max"), "other_s": med("other_s_max"), "peak_rss_mb": rss / 1024, "triad_gbs": triad}))
PY
		done
		if [ "$PYTORCH" = 1 ]; then
			/usr/bin/time -v "$PY" bench/pytorch_gcn.py "$DS" -threads "$THREADS" -epochs 10 >"$TMP/torch-$r" 2>"$TMP/log-$r-torch" ||
				{ tail -5 "$TMP/log-$r-torch" >&2; exit 1; }
			rss=$(awk '/Maximum resident set size/ { print $NF }' "$TMP/log-$r-torch")
			python3 - "$TMP/torch-$r" "$r" "$rss" <<'PY'
import json, sys
t = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(json.dumps({"round": int(sys.argv[2]), "precision": t["impl"], "epoch_s": t["epoch_s"], "spmm_s": t["spmm_s"],
                  "gemm_s": t["gemm_s"], "other_s": t["other_s"], "peak_rss_mb": int(sys.argv[3]) / 1024}))
PY
		fi
	done
}
if [ -n "$LOCK" ]; then
	export -f rounds job
	export TMP ROUNDS THREADS EPOCHS DROPOUT LAYER DS PY PYTORCH
	flock "$LOCK" bash -c rounds >"$TMP/out"
else
	rounds >"$TMP/out"
fi
grep '^round' "$TMP/out"
grep '^{' "$TMP/out" >"$TMP/runs.jsonl"
python3 - "$TMP/runs.jsonl" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
print("%-6s %-14s %9s %9s %9s %9s %10s" % ("round", "run", "epoch ms", "SpMM ms", "GEMM ms", "other ms", "peak RSS MB"))
for r in runs:
    print("%-6d %-14s %9.1f %9.1f %9.1f %9.1f %10.0f" % (r["round"], r["precision"], 1e3 * r["epoch_s"], 1e3 * r["spmm_s"], 1e3 * r["gemm_s"], 1e3 * r["other_s"], r["peak_rss_mb"]))
print("bf16 / float32 in the same round:")
for rnd in sorted({r["round"] for r in runs}):
    f = next(r for r in runs if r["round"] == rnd and r["precision"] == "float32")
    b = next(r for r in runs if r["round"] == rnd and r["precision"] == "bf16")
    print("round %d: epoch %.2fx, SpMM %.2fx, GEMM %.2fx, other %.2fx, peak RSS %.2fx" % (rnd, b["epoch_s"] / f["epoch_s"], b["spmm_s"] / f["spmm_s"], b["gemm_s"] / f["gemm_s"], b["other_s"] / f["other_s"], b["peak_rss_mb"] / f["peak_rss_mb"]))
    t = [r for r in runs if r["round"] == rnd and r["precision"].startswith("pytorch")]
    if t:
        t = t[0]
        print("round %d: %s: epoch float32 %.2fx, bf16 %.2fx of its; peak RSS float32 %.2fx, bf16 %.2fx of its" % (rnd, t["precision"],
              f["epoch_s"] / t["epoch_s"], b["epoch_s"] / t["epoch_s"], f["peak_rss_mb"] / t["peak_rss_mb"], b["peak_rss_mb"] / t["peak_rss_mb"]))
PY
