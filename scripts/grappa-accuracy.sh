#!/usr/bin/env bash
# Issue 16's accuracy table (README, "Isolated training (Grappa)"): final
# test accuracy over SEEDS seeds (default 10) of a Kipf GCN in isolated mode
# on Cora and CiteSeer, 2, 4 and 8 workers, halo and induced partitions,
# corrections none, batch and shrinkage, against full-graph training of the
# same model, and a 3-layer GCN on 8 workers. In process (goroutine ranks,
# no MPI), niced; one "ACC" line per setting, in runs/grappa-accuracy.txt.
#
#   scripts/grappa-accuracy.sh [SUBSTRING]
#
# SUBSTRING keeps the settings whose name holds it ("cora L2 W8",
# "citeseer", "L3"). It is jobs.TestIsolatedAccuracy behind GRAPPA_ACCURACY;
# the whole table takes hours on 2 shared cores.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p runs
GRAPPA_ACCURACY=1 GRAPPA_SEEDS=${SEEDS:-10} GRAPPA_ONLY=${1:-} nice -n 10 \
	go test -run TestIsolatedAccuracy -v -timeout 0 ./jobs 2>&1 | grep --line-buffered '^ACC' | tee runs/grappa-accuracy.txt
