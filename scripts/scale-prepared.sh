#!/usr/bin/env bash
# Measures prepared datasets at scale (README, "Datasets at scale"):
#  1. prepare an R-MAT graph (scale 22, edge factor 16: 4.2M vertices, 67M
#     sampled directed edges) with double permutation, under /usr/bin/time -v;
#  2. one training epoch from it on 8 ranks (2x2x2), each rank under time -v;
#  3. the same epoch on 1 rank from the prepared dataset, and on 1 rank with
#     the graph generated in memory (the path without prepared datasets).
# Everything goes under $DIR (default /tmp/scalegnn-scale), deleted at the
# end unless KEEP=1. Takes a few minutes and ~10 GiB of memory; run it on an
# otherwise idle machine.
set -euo pipefail
SCALE=${SCALE:-22}
DIR=${DIR:-/tmp/scalegnn-scale}
MPIRUN=${MPIRUN:-mpirun --allow-run-as-root --oversubscribe}
cd "$(dirname "$0")/.."
go build -o scalegnn .
mkdir -p "$DIR"
ds="$DIR/rmat$SCALE"
rss() { awk -F': ' '/Maximum resident/ {m = $2} /Elapsed/ {e = $2} END {printf "peak RSS %.0f MiB, wall %s", m / 1024, e}' "$1"; }

job() { # name source extra grid
	cat >"$DIR/$1.toml" <<EOT
[dataset]
source = "$2"
$3
[model]
layers = 2
hidden = 16
[train]
epochs = 1
[grid]
x = ${4%%x*}
y = $(echo "$4" | cut -dx -f2)
z = ${4##*x}
[permute]
scheme = "double"
seed = 7
[output]
dir = "$DIR/out-$1"
EOT
}

rm -rf "$ds"
/usr/bin/time -v -o "$DIR/prepare.time" ./scalegnn prepare -in "scale=$SCALE,edge_factor=16,seed=1" -format rmat \
	-out "$ds" -blocks 8 -permute double -seed 7 2>&1 | tee "$DIR/prepare.log" | grep -E '100%|wrote' 
./scalegnn dataset info "$ds" -grid 2x2x2 -layers 2
du -sh "$ds"

job prepared8 prepared "path = \"$ds\"" 2x2x2
$MPIRUN -np 8 sh -c '/usr/bin/time -v -o "$0.$OMPI_COMM_WORLD_RANK" ./scalegnn -config "$1"' "$DIR/rank" "$DIR/prepared8.toml" 2>&1 |
	grep -E 'shards loaded|	done	' || true
job prepared1 prepared "path = \"$ds\"" 1x1x1
/usr/bin/time -v -o "$DIR/prepared1.time" ./scalegnn -config "$DIR/prepared1.toml" 2>&1 | grep -E 'shards loaded|	done	' || true
job memory1 rmat "seed = 1
[dataset.rmat]
scale = $SCALE
edge_factor = 16" 1x1x1
/usr/bin/time -v -o "$DIR/memory1.time" ./scalegnn -config "$DIR/memory1.toml" 2>&1 | grep -E 'dataset loaded|	done	' || true

echo "prepare:                  $(rss "$DIR/prepare.time"), $(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {printf "CPU user %ss, system %ss", u, s}' "$DIR/prepare.time")"
for r in 0 1 2 3 4 5 6 7; do echo "8 ranks, prepared, rank $r: $(rss "$DIR/rank.$r")"; done
echo "1 rank, prepared:         $(rss "$DIR/prepared1.time")"
echo "1 rank, in memory:        $(rss "$DIR/memory1.time")"
"./scalegnn" compare -tol 0 "$DIR/out-prepared1/metrics.jsonl" "$DIR/out-memory1/metrics.jsonl" || true
[ "${KEEP:-0}" = 1 ] || rm -rf "$DIR"
