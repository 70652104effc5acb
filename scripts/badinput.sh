#!/usr/bin/env bash
# Runs every bad-input fixture of testdata/badinput under mpirun -np 8 and
# checks that the job ends on every rank with a non-zero exit, one error
# line naming the problem, no stack trace, and no hang (120 s limit).
#
#   scripts/badinput.sh [ranks]
set -uo pipefail
np=${1:-8}
bin=${SCALEGNN:-./scalegnn}
mpirun=(mpirun -np "$np")
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
mpirun+=(--oversubscribe)
d=testdata/badinput
fail=0
check() { # job, expected substring, extra arguments
  local out rc errs
  out=$(timeout 120 "${mpirun[@]}" "$bin" -config "$d/$1" "${@:3}" 2>&1)
  rc=$?
  errs=$(printf '%s\n' "$out" | grep '^scalegnn: ')
  if [ "$rc" = 124 ]; then
    echo "FAIL $1: hung (killed after 120 s)"; fail=1
  elif [ "$rc" = 0 ]; then
    echo "FAIL $1: exit code 0"; fail=1
  elif printf '%s\n' "$out" | grep -q -E 'panic:|goroutine [0-9]+ \['; then
    echo "FAIL $1: stack trace in output"; printf '%s\n' "$out"; fail=1
  elif [ "$(printf '%s\n' "$errs" | grep -c .)" != 1 ] || ! printf '%s\n' "$errs" | grep -qF -- "$2"; then
    echo "FAIL $1: want one error line containing: $2"; printf '%s\n' "$out"; fail=1
  else
    echo "ok   $1 (exit $rc): $errs"
  fi
}
check malformed.toml "malformed.toml: line 2, column 10"
check unknown_key.toml "unknown key model.hiden: did you mean model.hidden?"
check grid_mismatch.toml "grid 3x1x1 (d=1) has 3 ranks but the job was started with $np"
check bad_value.toml "model.dropout = 1.5: expected a number in [0, 1)"
# The dataset fixtures run on a grid of all the ranks, so every rank gets
# as far as reading the data.
grid=1x1x$np
check missing_file.toml "missing_file/edges.txt: file does not exist" -grid $grid
check bad_line.toml 'bad_line/labels.txt:3: expected' -grid $grid
check corrupt_prepared.toml 'corrupt_prepared/adj0/r1c1.data.npy: SHA-256 mismatch' -grid $grid
check truncated.toml 'truncated/edges.txt:3: expected' -grid $grid
check ok_tiny.toml '-grid: grid "0x1x1": expected XxYxZ' -grid 0x1x1
check batch_zero.toml 'train.mode = "minibatch" needs a batch size of at least 1 vertex'
check batch_too_big.toml 'train.batch_size: batch size 5 is outside [1, 4], the number of vertices' -grid $grid
check dp_not_dividing.toml "grid.d = 3 data-parallel replicas do not divide the $np ranks"
check bf16_unsupported.toml 'train.comm_dtype = "bf16" compresses the all-reduces inside a 3D grid, and a 1x1x1 grid has none'
# CUDA where it cannot be used (no library, driver or GPU; the empty
# CUDA_VISIBLE_DEVICES hides a GPU machine's): every rank fails to open
# its device and rank 0 names what is missing.
CUDA_VISIBLE_DEVICES= check cuda_missing.toml 'runtime.device = "cuda": cuda unavailable: ' -grid $grid
exit $fail
