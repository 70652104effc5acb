#!/usr/bin/env bash
# Checks that the performance model ranks algorithms as well as grids
# (README, "CAGNET 1.5D"; issue 17): one R-MAT graph of scale 17, a
# three-layer GCN, trained on every 3D grid Gx×Gy×Gz and every 1.5D
# arrangement P/c × c of the ranks for a few epochs, then
# `scalegnn perfmodel score` over all of them: the Spearman rank
# correlation of predicted and measured epoch times, and how much slower
# the predicted-best configuration ran than the measured best.
#
#   scripts/validate-algorithms.sh [hidden [configuration ...]]
#
# hidden defaults to 128; configurations (3d-XxYxZ, 1.5d-QxC) default to
# all of them, so that a long sweep can be trained in parts (each part
# under the quiet lock on a shared machine:
#   flock /tmp/quiet.lock scripts/validate-algorithms.sh 128 3d-1x1x8 3d-1x2x4
# ). After training, every completed run of OUT/h<hidden>/ is scored:
# score.txt and score.json. Environment: NP (ranks, default 8), SCALE
# (R-MAT scale, default 17), MACHINE (profile, default the built-in
# dev-2core-8ranks), BIN (the scalegnn binary; default: build ./scalegnn),
# MEDIAN=1 (score the median epoch instead of the mean),
# EPOCHS (default 5), SKIP (warm-up epochs left out of
# the measured mean, default 2), OUT (default runs/validate-algorithms).
# Keep the machine idle while it trains: 8 ranks on 2 cores yield their
# core whenever they wait in MPI, so even a niced compile takes a share and
# slows the run that happens to be training.
set -euo pipefail
cd "$(dirname "$0")/.."
NP=${NP:-8}
MACHINE=${MACHINE:-dev-2core-8ranks}
EPOCHS=${EPOCHS:-5}
SKIP=${SKIP:-2}
STAT=()
[ "${MEDIAN:-0}" = 1 ] && STAT=(-median)
SCALE=${SCALE:-17}
OUT=${OUT:-runs/validate-algorithms}
MPIRUN=(mpirun -np "$NP" --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
HIDDEN=${1:-128}
[ $# -gt 0 ] && shift
only=" $* "

# BIN: a binary built beforehand keeps every part of a sweep on the same
# code while the tree changes; without it, build one now.
BIN=${BIN:-}
if [ -z "$BIN" ]; then
	go build -o scalegnn .
	BIN=./scalegnn
fi

dir=$OUT/h$HIDDEN
mkdir -p "$dir"
# Single permutation: both algorithms take it (1.5D refuses double),
# and it balances R-MAT's skewed degrees over the block rows.
cat >"$dir/job.toml" <<TOML
[dataset]
source = "rmat"
seed = 1
[dataset.rmat]
scale = $SCALE
edge_factor = 16
features = 64
classes = 8
[model]
layers = 3
hidden = $HIDDEN
dropout = 0.5
[train]
epochs = $EPOCHS
eval_every = $EPOCHS
seed = 42
[permute]
scheme = "single"
seed = 7
[grid]
x = $NP
[output]
dir = "unset"
TOML
run() { # name, then the sed expression that makes its job copy
	local name=$1 sedexpr=$2
	[ "$only" = "  " ] || [[ "$only" == *" $name "* ]] || return 0
	echo "== h$HIDDEN: $name" >&2
	rm -rf "${dir:?}/$name"
	sed -e "s|^dir = .*|dir = \"$dir/$name\"|" -e "$sedexpr" "$dir/job.toml" >"$dir/job-$name.toml"
	"${MPIRUN[@]}" "$BIN" -config "$dir/job-$name.toml" 2>"$dir/$name.log" || { tail -5 "$dir/$name.log"; exit 1; }
}
# Every ordered factorisation of NP into Gx·Gy·Gz.
for ((x = 1; x <= NP; x++)); do
	((NP % x)) && continue
	for ((y = 1; y <= NP / x; y++)); do
		(((NP / x) % y)) && continue
		g="${x}x${y}x$((NP / x / y))"
		run "3d-$g" "s|^x = .*|x = $x\ny = $y\nz = $((NP / x / y))|"
	done
done
# Every replication c dividing NP: P/c process rows × c.
for ((c = 1; c <= NP; c++)); do
	((NP % c)) && continue
	run "1.5d-$((NP / c))x$c" "s|^x = .*|x = $NP\nreplication = $c|; s|^seed = 42|seed = 42\nalgorithm = \"1.5d\"|"
done
runs=()
for r in "$dir"/3d-* "$dir"/1.5d-*; do
	[ -d "$r" ] && grep -q '"completed"' "$r/summary.json" 2>/dev/null && runs+=("$r")
done
if [ ${#runs[@]} -lt 2 ]; then
	echo "fewer than two completed runs in $dir: nothing to score yet" >&2
	exit 0
fi
"$BIN" perfmodel score -config "$dir/job.toml" -ranks "$NP" -machine "$MACHINE" -skip-epochs "$SKIP" "${STAT[@]}" "${runs[@]}" | tee "$dir/score.txt"
"$BIN" perfmodel score -config "$dir/job.toml" -ranks "$NP" -machine "$MACHINE" -skip-epochs "$SKIP" "${STAT[@]}" -json "${runs[@]}" >"$dir/score.json"
