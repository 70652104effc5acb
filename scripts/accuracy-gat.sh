#!/usr/bin/env bash
# GAT accuracy over seeds, in every training method, on 1 rank and on 8
# (issue 26): Cora and CiteSeer with the paper's settings
# (examples/cora-gat*.toml), train.seed = 1..SEEDS. Runs JOBS runs at once
# (8-rank runs count 8). Writes one JSON line per run to OUT/runs.jsonl and
# a table (mean ± std of the test accuracy at the best validation epoch,
# and of the final test accuracy) to OUT/table.md.
#
#   SEEDS=10 CORES=16 OUT=runs/acc-gat bash scripts/accuracy-gat.sh [./scalegnn]
#
# Every rank runs one thread (runtime.threads = 1). Half the cores run
# 8-rank jobs, half 1-rank jobs, seed by seed, so that a sweep cut short
# by LIMIT (seconds; no new run starts after it) still covers every
# method and dataset with its first seeds.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-./scalegnn}")
seeds=${SEEDS:-10}
cores=${CORES:-$(nproc)}
out=${OUT:-runs/acc-gat}
py=${PYTHON:-python3}
mkdir -p "$out/jobs"
export OMPI_MCA_mpi_yield_when_idle=1
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 8)
# ONLY, an extended regular expression, keeps the runs whose
# "dataset-method-ranks-seed" matches it (e.g. 'fullgraph-3d-1-|-8-[1-3]$').
only=${ONLY:-.}
# method, its 8-rank example, and how its 1-rank job differs.
methods=(
  "fullgraph-3d|examples/cora-gat-8.toml|x=1,y=1,z=1"
  "minibatch-4d|examples/cora-gat-minibatch-8.toml|x=1,y=1,z=1,d=1"
  "neighbor|examples/cora-gat-neighbor-8.toml|d=1,batch_size=136"
  "isolated|examples/cora-gat-isolated-8.toml|d=1"
  "fullgraph-1.5d|examples/cora-gat-15d-8.toml|x=1,replication=1"
)
# job SRC DST DATASET SEED RANKS EDITS: SRC with the dataset, seed, output
# directory and, for 1 rank, the edits (key=value, each the first such key
# in the file) applied.
job() {
  "$py" - "$@" <<'PY'
import re, sys
src, dst, ds, seed, ranks, edits = sys.argv[1:7]
s = open(src).read()
s = s.replace('source = "cora"', 'source = "%s"' % ds)
s = re.sub(r'(?m)^seed = \d+', 'seed = %s' % seed, s)
s = re.sub(r'(?m)^dir = .*', 'dir = "%s"' % (dst[:-5]), s)
s += "\n[runtime]\nthreads = 1\n"
if ranks == "1":
    for kv in edits.split(","):
        k, v = kv.split("=")
        s, n = re.subn(r'(?m)^%s = [^\n#]*' % k, '%s = %s ' % (k, v), s, count=1)
        if n == 0:
            sys.exit("accuracy-gat.sh: %s has no key %s" % (src, k))
# CiteSeer has 120 training vertices: neighbor mode's 136 seeds per step
# (17 on each of 8 ranks) become 120 (15 on each of 8).
if ds == "citeseer":
    s = re.sub(r'(?m)^batch_size = 17\b', 'batch_size = 15', s)
    s = re.sub(r'(?m)^batch_size = 136\b', 'batch_size = 120', s)
open(dst, "w").write(s)
PY
}
list=$out/list
: >"$list"
for seed in $(seq 1 "$seeds"); do
  for m in "${methods[@]}"; do
    IFS='|' read -r name src edits <<<"$m"
    for ds in cora citeseer; do
      for ranks in 1 8; do
        j=$out/jobs/$ds-$name-$ranks-$seed.toml
        grep -Eq -- "$only" <<<"$ds-$name-$ranks-$seed" || continue
        job "$src" "$j" "$ds" "$seed" "$ranks" "$edits" || exit 1
        rm -rf "${j%.toml}"
        echo "$ranks $j" >>"$list"
      done
    done
  done
done
# 8-rank runs take 8 cores: run them JOBS8 at a time, then the 1-rank ones.
run1() {
  local ranks=$1 j=$2
  if [ -n "${LIMIT:-}" ] && [ $(( $(date +%s) - START )) -ge "$LIMIT" ]; then return 0; fi
  if [ "$ranks" = 8 ]; then
    "${mpirun[@]}" "$bin" -config "$j" >/dev/null 2>"${j%.toml}.log"
  else
    "$bin" -config "$j" >/dev/null 2>"${j%.toml}.log"
  fi
  echo "$j exit $?" >>"$out/exits"
}
export -f run1
export bin out LIMIT START=$(date +%s)
mpirun_q=$(printf '%q ' "${mpirun[@]}")
export MPIRUN="$mpirun_q"
: >"$out/exits"
half=$((cores / 2 > 0 ? cores / 2 : 1))
grep '^8 ' "$list" | xargs -r -P $((half / 8 > 0 ? half / 8 : 1)) -L1 bash -c 'mpirun=($MPIRUN); run1 "$0" "$1"' &
grep '^1 ' "$list" | xargs -r -P "$half" -L1 bash -c 'run1 "$0" "$1"'
wait
"$py" - "$out" <<'PY'
import json, os, statistics, sys
out = sys.argv[1]
rows = []
for f in sorted(os.listdir(os.path.join(out, "jobs"))):
    if not f.endswith(".toml"):
        continue
    ds, rest = f[:-5].split("-", 1)
    name, ranks, seed = rest.rsplit("-", 2)
    if not os.path.exists(os.path.join(out, "jobs", f[:-5] + ".log")):
        continue  # never started (LIMIT)
    try:
        s = json.load(open(os.path.join(out, "jobs", f[:-5], "summary.json")))
    except OSError:
        rows.append({"dataset": ds, "method": name, "ranks": int(ranks), "seed": int(seed), "error": "no summary.json"})
        continue
    rows.append({"dataset": ds, "method": name, "ranks": int(ranks), "seed": int(seed), "status": s.get("status"),
                 "best": s.get("test_acc_at_best_val"), "final": s["final_accuracy"]["test"], "epochs": s.get("epochs_run"),
                 "epoch_s": s.get("mean_epoch_s")})
with open(os.path.join(out, "runs.jsonl"), "w") as fh:
    for r in rows:
        fh.write(json.dumps(r) + "\n")
def ms(v):
    v = [x for x in v if x is not None]
    if not v:
        return "-"
    sd = statistics.pstdev(v) if len(v) > 1 else 0
    return "%.1f ± %.1f (%d)" % (100 * statistics.mean(v), 100 * sd, len(v))
lines = ["| dataset | method | ranks | test at best val | final test | epochs |", "| --- | --- | --- | --- | --- | --- |"]
keys = sorted({(r["dataset"], r["method"], r["ranks"]) for r in rows})
for k in keys:
    rs = [r for r in rows if (r["dataset"], r["method"], r["ranks"]) == k and "error" not in r]
    bad = sum(1 for r in rows if (r["dataset"], r["method"], r["ranks"]) == k and ("error" in r or r.get("status") != "completed"))
    ep = statistics.mean(r["epochs"] for r in rs) if rs else 0
    lines.append("| %s | %s | %d | %s | %s | %.0f%s |" % (k[0], k[1], k[2], ms([r["best"] for r in rs]), ms([r["final"] for r in rs]), ep,
                                                         (" (%d failed)" % bad) if bad else ""))
open(os.path.join(out, "table.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
