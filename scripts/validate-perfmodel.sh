#!/usr/bin/env bash
# Checks the performance model on this machine (README, "Choosing the
# grid"): calibrate under the same launch as training, train the job on
# every ordered factorisation Gx×Gy×Gz of the rank count, and compare the
# measured epoch times with the predictions (Spearman rank correlation, and
# how much slower the predicted-best grid ran than the measured best).
#
#   scripts/validate-perfmodel.sh [job.toml] [ranks]
#
# Defaults: examples/rmat17-perfmodel.toml on 8 ranks. Everything goes to
# runs/validate-perfmodel/: machine.toml (the calibration), one run
# directory per grid, score.txt, score.json and grids.png. Takes a few
# minutes on 2 cores; timings on a shared machine are noisy, so run it once
# on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
JOB=${1:-examples/rmat17-perfmodel.toml}
NP=${2:-8}
OUT=runs/validate-perfmodel
MPIRUN=(mpirun -np "$NP" --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)

go build -o scalegnn .
mkdir -p "$OUT"
echo "== calibrating with ${MPIRUN[*]}" >&2
"${MPIRUN[@]}" ./scalegnn perfmodel calibrate -out "$OUT/machine.toml" -name "validate-$NP-ranks"

# Every ordered factorisation of NP into Gx·Gy·Gz.
grids=()
for ((x = 1; x <= NP; x++)); do
	((NP % x)) && continue
	for ((y = 1; y <= NP / x; y++)); do
		(((NP / x) % y)) && continue
		grids+=("${x}x${y}x$((NP / x / y))")
	done
done

runs=()
for g in "${grids[@]}"; do
	dir="$OUT/$g"
	echo "== training on grid $g" >&2
	# A per-run copy of the job with its own output directory.
	sed -e "s|^dir = .*|dir = \"$dir\"|" "$JOB" >"$OUT/job-$g.toml"
	"${MPIRUN[@]}" ./scalegnn -config "$OUT/job-$g.toml" -grid "$g" 2>"$OUT/$g.log" || { tail -5 "$OUT/$g.log"; exit 1; }
	runs+=("$dir")
done

./scalegnn perfmodel score -config "$JOB" -ranks "$NP" -machine "$OUT/machine.toml" -plot "$OUT/grids.png" "${runs[@]}" | tee "$OUT/score.txt"
./scalegnn perfmodel score -config "$JOB" -ranks "$NP" -machine "$OUT/machine.toml" -json "${runs[@]}" >"$OUT/score.json"
