#!/usr/bin/env bash
# Mean test accuracy of a job over several training seeds.
#
#   scripts/accuracy.sh examples/cora.toml 10            # one rank
#   scripts/accuracy.sh examples/cora-8.toml 10 mpirun -np 8
#
# Each run gets train.seed = 1..N and its own output directory under
# runs/accuracy/; the final test accuracy of each run is read from its
# summary.json. Prints one line per seed and the mean and standard deviation.
set -euo pipefail
job=$1
runs=${2:-10}
shift 2 || true
launcher=("$@")
bin=${SCALEGNN:-./scalegnn}
name=$(basename "$job" .toml)
out=runs/accuracy/$name
mkdir -p "$out"
accs=()
for seed in $(seq 1 "$runs"); do
  dir=$out/seed$seed
  # Rewrite train.seed and output.dir of the job (the [train] table has seed,
  # [output] has dir).
  awk -v seed="$seed" -v dir="$dir" '
    /^\[/ { table=$0 }
    table=="[train]" && $1=="seed" { print "seed = " seed; next }
    table=="[output]" && $1=="dir" { print "dir = \"" dir "\""; next }
    { print }' "$job" > "$out/seed$seed.toml"
  rm -rf "$dir" # a used output.dir is refused
  "${launcher[@]}" "$bin" -config "$out/seed$seed.toml" 2>"$out/seed$seed.log"
  acc=$(python3 -c "import json,sys; print(json.load(open('$dir/summary.json'))['final_accuracy']['test'])" 2>/dev/null \
    || grep -o '"test": [0-9.]*' "$dir/summary.json" | awk '{print $2}')
  echo "seed $seed: test accuracy $acc"
  accs+=("$acc")
done
printf '%s\n' "${accs[@]}" | awk -v n="$runs" -v job="$job" '
  { s += $1; q += $1*$1 }
  END { m = s/n; sd = sqrt(q/n - m*m); printf "%s: mean test accuracy %.2f%% (std %.2f) over %d seeds\n", job, 100*m, 100*sd, n }'
