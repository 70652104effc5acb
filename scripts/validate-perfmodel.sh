#!/usr/bin/env bash
# Checks the performance model on this machine (README, "Choosing the
# grid"): calibrate under the same launch as training, train the job on
# every ordered factorisation Gx×Gy×Gz of the rank count, and compare the
# measured epoch times with the predictions (Spearman rank correlation, and
# how much slower the predicted-best grid ran than the measured best).
#
#   scripts/validate-perfmodel.sh [job.toml] [ranks] [minibatch-job.toml]
#
# Defaults: examples/rmat17-perfmodel.toml on 8 ranks. With a mini-batch
# job (default examples/rmat17-minibatch-perfmodel.toml; "none" skips it),
# that job is also trained on every 4D grid Gd×Gx×Gy×Gz of the ranks with
# Gd = 1 and 2 and scored the same way (score-minibatch.*). Everything goes to
# runs/validate-perfmodel/: machine.toml (the calibration), one run
# directory per grid, score.txt, score.json and grids.png. Takes a few
# minutes on 2 cores; timings on a shared machine are noisy, so run it once
# on a quiet machine. Environment: SCALEGNN, a built binary to use instead
# of building one (a machine without Go); OUT, the output directory.
set -euo pipefail
cd "$(dirname "$0")/.."
JOB=${1:-examples/rmat17-perfmodel.toml}
NP=${2:-8}
MBJOB=${3:-examples/rmat17-minibatch-perfmodel.toml}
OUT=${OUT:-runs/validate-perfmodel}
MPIRUN=(mpirun -np "$NP" --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)

bin=${SCALEGNN:-./scalegnn}
[ -n "${SCALEGNN:-}" ] || go build -o scalegnn .
mkdir -p "$OUT"
echo "== calibrating with ${MPIRUN[*]}" >&2
"${MPIRUN[@]}" "$bin" perfmodel calibrate -out "$OUT/machine.toml" -name "validate-$NP-ranks"

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
	"${MPIRUN[@]}" "$bin" -config "$OUT/job-$g.toml" -grid "$g" 2>"$OUT/$g.log" || { tail -5 "$OUT/$g.log"; exit 1; }
	runs+=("$dir")
done

"$bin" perfmodel score -config "$JOB" -ranks "$NP" -machine "$OUT/machine.toml" -plot "$OUT/grids.png" "${runs[@]}" | tee "$OUT/score.txt"
"$bin" perfmodel score -config "$JOB" -ranks "$NP" -machine "$OUT/machine.toml" -json "${runs[@]}" >"$OUT/score.json"

[ "$MBJOB" = none ] && exit 0
# The mini-batch job on every grid with Gd = 1 and Gd = 2 (when 2 divides
# the ranks): Gd is set in a per-run copy, Gx×Gy×Gz by -grid.
mbruns=()
for d in 1 2; do
	((NP % d)) && continue
	n=$((NP / d))
	for ((x = 1; x <= n; x++)); do
		((n % x)) && continue
		for ((y = 1; y <= n / x; y++)); do
			((n / x % y)) && continue
			g="${x}x${y}x$((n / x / y))"
			dir="$OUT/minibatch-d$d-$g"
			echo "== mini-batch training on grid $g, d = $d" >&2
			sed -e "s|^dir = .*|dir = \"$dir\"|" -e "s|^d = .*|d = $d|" "$MBJOB" >"$OUT/job-minibatch-d$d-$g.toml"
			"${MPIRUN[@]}" "$bin" -config "$OUT/job-minibatch-d$d-$g.toml" -grid "$g" 2>"$dir.log" || { tail -5 "$dir.log"; exit 1; }
			mbruns+=("$dir")
		done
	done
done
"$bin" perfmodel score -config "$MBJOB" -ranks "$NP" -machine "$OUT/machine.toml" -plot "$OUT/grids-minibatch.png" "${mbruns[@]}" | tee "$OUT/score-minibatch.txt"
"$bin" perfmodel score -config "$MBJOB" -ranks "$NP" -machine "$OUT/machine.toml" -json "${mbruns[@]}" >"$OUT/score-minibatch.json"
