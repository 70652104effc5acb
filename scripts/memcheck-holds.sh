#!/usr/bin/env bash
# memcheck-holds.sh [BINARY] [ULIMIT_KB]: the memory check's own
# recommendation runs under the limit it was given (issue 25, defect 11).
# Under ulimit -v ULIMIT_KB (default 3000000) Cora with hidden 20,000 on
# one rank is refused with "the fastest grid that fits ... is AxBxC on N
# ranks"; that grid is then run under mpirun with the same ulimit -v, one
# epoch with an evaluation. It must train (exit 0) or be refused in one
# line naming another grid, which is followed in turn (at most 3 times).
# It fails on a Go out-of-memory crash or stack trace, any other exit, or
# a hang (OpenBLAS retries forever when it cannot map its buffer). Before
# the fix the recommended 4x1x1 died on every rank in gcn.(*Model).Evaluate:
# "runtime: out of memory: cannot allocate 432013312-byte block".
set -u
bin=$(realpath "${1:-./scalegnn}")
limit=${2:-3000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export OMPI_MCA_mpi_yield_when_idle=1
mpirun=$(command -v mpirun.openmpi || echo mpirun)
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)

job() { # job X Y Z RUN: the job file for grid XxYxZ
	cat >"$dir/job-$1x$2x$3.toml" <<EOF
[dataset]
source = "cora"
normalize_features = true
[model]
layers = 2
hidden = 20000
dropout = 0.5
[train]
mode = "fullgraph"
epochs = 1
eval_every = 1
seed = 42
[grid]
x = $1
y = $2
z = $3
[output]
dir = "$dir/run-$1x$2x$3"
EOF
	echo "$dir/job-$1x$2x$3.toml"
}

# recommended LOG: "X Y Z N" of the grid the refusal in LOG names.
recommended() {
	sed -n 's/.*the fastest grid that fits in [^ ]* per rank is \([0-9]*\)x\([0-9]*\)x\([0-9]*\)\( (d=1)\)\? on \([0-9]*\) ranks.*/\1 \2 \3 \5/p' "$1" | head -n 1
}

fail() { echo "memcheck-holds.sh: $*"; exit 1; }

(ulimit -v "$limit" && exec "$bin" -config "$(job 1 1 1)") >"$dir/1x1x1.log" 2>&1
rc=$?
grep '^scalegnn: ' "$dir/1x1x1.log"
[ $rc = 1 ] || { cat "$dir/1x1x1.log"; fail "1x1x1 under ulimit -v $limit: exit $rc, want a refusal (1)"; }
read -r x y z n <<<"$(recommended "$dir/1x1x1.log")"
[ -n "${n:-}" ] || fail "the refusal names no grid that fits"

for hop in 1 2 3; do
	log="$dir/${x}x${y}x${z}.log"
	(ulimit -v "$limit" && exec timeout 300 "$mpirun" "${root[@]}" --oversubscribe -np "$n" "$bin" -config "$(job "$x" "$y" "$z")") >"$log" 2>&1
	rc=$?
	if grep -qE 'runtime: out of memory|fatal error|^goroutine [0-9]+ |^panic: ' "$log"; then
		grep -m 3 -E 'runtime: out of memory|fatal error|^panic: ' "$log"
		fail "the recommended grid ${x}x${y}x${z} on $n ranks crashed under ulimit -v $limit (exit $rc)"
	fi
	case $rc in
	0)
		grep -h 'Go memory limit' "$log" | head -n 1
		grep -h ' done ' "$log"
		echo "memcheck-holds.sh: the recommended grid ${x}x${y}x${z} on $n ranks trained under ulimit -v $limit"
		exit 0
		;;
	124 | 137) fail "the recommended grid ${x}x${y}x${z} on $n ranks hung under ulimit -v $limit" ;;
	esac
	grep -m 1 '^scalegnn: ' "$log" || { tail -n 20 "$log"; fail "${x}x${y}x${z} on $n ranks: exit $rc without a refusal"; }
	read -r x y z n <<<"$(recommended "$log")"
	[ -n "${n:-}" ] || fail "the refusal names no grid that fits"
done
fail "no recommended grid ran after 3 refusals"
