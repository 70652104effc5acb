#!/usr/bin/env bash
# The CUDA device's checks on a GPU machine, in one run (issue 14): Cora's
# loss curve on the GPU against the CPU's with the same seed (within 1e-4),
# Cora and CiteSeer test accuracy over SEEDS seeds on both devices, and the
# two failures a user can meet: a job too big for the GPU's memory, and
# runtime.device = "cuda" with no GPU visible. Results go to $OUT (or
# runs/gpu-check) as gpu-check.txt.
#
#   bash scripts/gpu-check.sh ./scalegnn [SEEDS]
#
# The binary is a nompi build (the GPU machine has no MPI and no Go).
set -uo pipefail
bin=$(realpath "$1")
seeds=${2:-10}
out=${OUT:-runs/gpu-check}
work=runs/gpu-check
mkdir -p "$out" "$work"
report=$out/gpu-check.txt
: >"$report"
say() { echo "$*" | tee -a "$report"; }
fail=0

# with_device JOB DEVICE: the job with runtime.device set.
with_device() {
  local job=$1 dev=$2 name
  name=$(basename "$job" .toml)-$dev
  { grep -v '^\[runtime\]' "$job"; printf '\n[runtime]\ndevice = "%s"\n' "$dev"; } >"$work/$name.toml"
  echo "$work/$name.toml"
}

# 1. Same seed, GPU against CPU: the loss curves within 1e-4.
for ds in cora citeseer; do
  for dev in cpu cuda; do
    job=$(with_device examples/$ds.toml $dev)
    rm -rf "$work/$ds-$dev-run"
    sed -i "s|^dir = .*|dir = \"$work/$ds-$dev-run\"|" "$job"
    "$bin" -config "$job" 2>"$work/$ds-$dev.log" || { say "FAIL: $ds on $dev: $(tail -1 "$work/$ds-$dev.log")"; fail=1; }
  done
  grep -m1 -o 'device[^,]*cuda (GPU[^"]*' "$work/$ds-cuda.log" | head -1 | tee -a "$report"
  if "$bin" compare -tol 1e-4 "$work/$ds-cpu-run" "$work/$ds-cuda-run" >"$work/$ds-compare.txt" 2>&1; then
    say "$ds: GPU and CPU loss curves agree within 1e-4 (same seed): $(tail -1 "$work/$ds-compare.txt")"
  else
    say "FAIL: $ds: GPU and CPU loss curves differ: $(tail -3 "$work/$ds-compare.txt" | tr '\n' ' ')"
    fail=1
  fi
done

# 2. Test accuracy over seeds on both devices.
for ds in cora citeseer; do
  for dev in cpu cuda; do
    job=$(with_device examples/$ds.toml $dev)
    SCALEGNN=$bin bash scripts/accuracy.sh "$job" "$seeds" 2>&1 | tail -1 | tee -a "$report"
  done
done

# 3. A job too big for the GPU (about 97 GiB predicted on an 80 GB GPU,
# within the host's memory): refused before loading, one line, non-zero;
# and with runtime.mem_check = false, the failed allocation reported as
# one line with the prediction and a grid that fits.
for check in true false; do
  big=$work/too-big-$check.toml
  cat >"$big" <<TOML
[dataset]
source = "rmat"
[dataset.rmat]
scale = 20
edge_factor = 16
features = 128
classes = 32
[model]
layers = 3
hidden = 1536
[train]
epochs = 1
[output]
dir = "$work/too-big-run"
overwrite = true
[runtime]
device = "cuda"
mem_check = $check
TOML
  start=$(date +%s)
  "$bin" -config "$big" >"$work/too-big-$check.out" 2>"$work/too-big-$check.log"; rc=$?
  # The log's INFO lines go to stderr too; the error is the one line
  # that starts with "scalegnn:".
  lines=$(grep -c '^scalegnn:' "$work/too-big-$check.log")
  say "too big for the GPU, mem_check = $check: exit $rc after $(( $(date +%s) - start )) s, $lines error line(s): $(grep '^scalegnn:' "$work/too-big-$check.log") [last line: $(tail -1 "$work/too-big-$check.log" | head -c 300)]"
  [ "$rc" -ne 0 ] && [ "$lines" -eq 1 ] || fail=1
done

# 4. runtime.device = "cuda" with no GPU visible.
CUDA_VISIBLE_DEVICES= "$bin" -config testdata/badinput/cuda_missing.toml >/dev/null 2>"$work/nogpu.log"; rc=$?
say "no GPU visible: exit $rc, $(wc -l <"$work/nogpu.log") line(s): $(cat "$work/nogpu.log")"
[ "$rc" -ne 0 ] || fail=1
exit $fail
