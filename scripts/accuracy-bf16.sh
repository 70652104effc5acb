#!/usr/bin/env bash
# Mixed precision's accuracy (issue 28): train.precision = "bf16" against
# "float32" on Cora and CiteSeer in full-graph, mini-batch and neighbor
# mode, train.seed = 1..SEEDS (10), one rank each, the examples' jobs
# (examples/<dataset>.toml, -minibatch.toml, -neighbor.toml) otherwise
# unchanged. Writes each run under OUT (runs/acc-bf16), one JSON line per
# run to OUT/runs.jsonl, a table to OUT/table.md (mean ± std of the final
# test accuracy and of the test accuracy at the best validation epoch,
# bf16 minus float32 in points), and a plot of seed 1's loss curves in
# float32 and bf16 per job (OUT/<dataset>-<mode>-loss.png, scalegnn plot).
#
#   SEEDS=10 OUT=runs/acc-bf16 bash scripts/accuracy-bf16.sh [./scalegnn]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-./scalegnn}")
seeds=${SEEDS:-10}
out=$(realpath -m "${OUT:-runs/acc-bf16}")
mkdir -p "$out"
for ds in cora citeseer; do
	for mode in fullgraph minibatch neighbor; do
		src=examples/$ds.toml
		[ "$mode" = fullgraph ] || src=examples/$ds-$mode.toml
		for p in float32 bf16; do
			for seed in $(seq 1 "$seeds"); do
				name=$ds-$mode-$p-$seed
				awk -v seed="$seed" -v dir="$out/$name" -v p="$p" '
					/^\[/ { table = $0; print; if (table == "[train]") print "precision = \"" p "\""; next }
					table == "[train]" && $1 == "seed" { print "seed = " seed; next }
					table == "[train]" && $1 == "precision" { next }
					table == "[output]" && $1 == "dir" { print "dir = \"" dir "\"\noverwrite = true"; next }
					{ print }' "$src" >"$out/$name.toml"
				"$bin" -config "$out/$name.toml" >/dev/null 2>"$out/$name.log" || { echo "$name failed:" >&2; tail -3 "$out/$name.log" >&2; exit 1; }
			done
		done
		"$bin" plot "$out/$ds-$mode-float32-1" "$out/$ds-$mode-bf16-1" -o "$out/$ds-$mode-loss.png" >/dev/null
	done
done
python3 - "$out" "$seeds" <<'PY'
import json, os, statistics, sys
out, seeds = sys.argv[1], int(sys.argv[2])
rows = []
for ds in ("cora", "citeseer"):
    for mode in ("fullgraph", "minibatch", "neighbor"):
        for p in ("float32", "bf16"):
            for seed in range(1, seeds + 1):
                s = json.load(open(os.path.join(out, f"{ds}-{mode}-{p}-{seed}", "summary.json")))
                rows.append({"dataset": ds, "mode": mode, "precision": s.get("precision", p), "seed": seed,
                             "test": s["final_accuracy"]["test"], "test_at_best_val": s["test_acc_at_best_val"],
                             "mean_epoch_s": s["mean_epoch_s"]})
with open(os.path.join(out, "runs.jsonl"), "w") as fh:
    for r in rows:
        fh.write(json.dumps(r) + "\n")
ms = lambda v: "%.2f ± %.2f" % (100 * statistics.mean(v), 100 * statistics.pstdev(v))
lines = ["| dataset | mode | float32 final test | bf16 final test | bf16 − float32 | float32 test at best val | bf16 test at best val | bf16 − float32 |",
         "| --- | --- | --- | --- | --- | --- | --- | --- |"]
for ds in ("cora", "citeseer"):
    for mode in ("fullgraph", "minibatch", "neighbor"):
        get = lambda p, k: [r[k] for r in rows if r["dataset"] == ds and r["mode"] == mode and r["precision"] == p]
        d1 = 100 * (statistics.mean(get("bf16", "test")) - statistics.mean(get("float32", "test")))
        d2 = 100 * (statistics.mean(get("bf16", "test_at_best_val")) - statistics.mean(get("float32", "test_at_best_val")))
        lines.append("| %s | %s | %s | %s | %+.2f | %s | %s | %+.2f |" % (ds, mode, ms(get("float32", "test")), ms(get("bf16", "test")), d1,
                     ms(get("float32", "test_at_best_val")), ms(get("bf16", "test_at_best_val")), d2))
open(os.path.join(out, "table.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
