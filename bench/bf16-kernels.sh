#!/usr/bin/env bash
# bfloat16 kernels against float32 (issue 28), side by side in one run:
#
#   bash bench/bf16-kernels.sh [ITERS]
#
# It builds spmm/cpu's test binary, then runs BenchmarkBF16
# (spmm/cpu/bf16_bench_test.go) under the timing lock (LOCK, default
# /tmp/quiet.lock; LOCK= runs without one): on the R-MAT graph of scale 18
# (262144 vertices, edge factor 16, GCN-normalised) at width 128 on 2
# threads, each iteration runs in turn a STREAM triad, the float32 SpMM,
# the bf16-in/f32-out and bf16-in/bf16-out SpMMs, and the GEMMs of a GCN
# layer in float32 (sgemm) and in bf16 (GemmBF16, whose kernel the first
# lines name: "amx" where the CPU has AMX tiles): the forward X·W
# (262144 × 128 times 128 × 128), the weight gradient Xᵀ·G (128 × 262144
# times 262144 × 128, -TN) and the input gradient G·Wᵀ (-NT). It prints
# the medians of ITERS iterations (default 10): ms, ratio to float32 (the
# SpMMs to spmm-f32, each GemmBF16 to the sgemm of its form), GB/s and %
# of the triad, in wall time and in CPU time (which other processes on the
# cores do not inflate).
#
# OpenBLAS 0.3.21 does not know recent Intel CPUs and picks its generic
# "Prescott" kernels; unless OPENBLAS_CORETYPE is set, the script sets
# SkylakeX (AVX-512) or Haswell when that happens (spmm/cpu's doc.go).
set -euo pipefail
ITERS=${1:-10}
LOCK=${LOCK-/tmp/quiet.lock}
cd "$(dirname "$0")/.."
BIN=$(mktemp -d)/cpu.test
trap 'rm -rf "$(dirname "$BIN")"' EXIT
nice -n 10 go test -c -o "$BIN" ./spmm/cpu
if [ -z "${OPENBLAS_CORETYPE:-}" ] && "$BIN" -test.run '^TestBLASConfig$' -test.v 2>&1 | grep -q 'core=Prescott'; then
	if grep -qw avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX; else export OPENBLAS_CORETYPE=Haswell; fi
	echo "OpenBLAS picked Prescott: running with OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
fi
run=("$BIN" -test.run '^$' -test.bench '^BenchmarkBF16$' -test.benchtime "${ITERS}x" -test.v)
if [ -n "$LOCK" ]; then run=(flock "$LOCK" "${run[@]}"); fi
out=$("${run[@]}")
echo "$out" | grep -E 'GemmBF16Kernel|^Benchmark' | sed 's/^ *//' | grep -v '^BenchmarkBF16$' | cut -c1-200 >&2
echo "$out" | awk '
/^BenchmarkBF16\// && NF > 10 {
	for (i = 3; i < NF; i += 2) m[$(i+1)] = $i
	printf "%-16s %9s %7s %9s %7s %8s %8s\n", "operation", "ms", "x f32", "x f32 cpu", "GB/s", "%triad", "%triad cpu"
	n = split("spmm-f32 spmm-bf16-f32 spmm-bf16-bf16 sgemm gemm-bf16 sgemm-TN gemm-bf16-TN sgemm-NT gemm-bf16-NT", ops, " ")
	for (k = 1; k <= n; k++) {
		o = ops[k]
		base = (o == "spmm-f32" || o ~ /^sgemm/)
		x = base ? "1" : m[o "-x"]
		xc = base ? "1" : m[o "-x-cpu"]
		printf "%-16s %9.1f %7s %9s %7s %8s %8s\n", o, m[o "-ms"], x, xc,
			(o ~ /spmm/ ? m[o "-GB/s"] : "-"), (o ~ /spmm/ ? m[o "-%triad"] : "-"), (o ~ /spmm/ ? m[o "-%triad-cpu"] : "-")
	}
	printf "triad: %s GB/s (wall)\n", m["triad-GB/s"]
}'
