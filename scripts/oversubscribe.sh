#!/usr/bin/env bash
# oversubscribe.sh [BINARY] [EPOCHS]: Cora on 8 ranks over this machine's
# cores under mpirun with 8 slots, which (like srun, or mpirun inside a
# Slurm allocation) does not mark the node oversubscribed, so Open MPI
# does not yield by itself; OMPI_MCA_mpi_yield_when_idle is unset. With
# more ranks than cores, scalegnn must print its yield line and train in
# about the time of mpirun --oversubscribe; before issue 25 it busy-polled
# (Cora, 2 cores: 4m25s of training against 9.7s). Prints the training
# time; fails when the yield line is missing on an oversubscribed node.
set -u
bin=${1:-./scalegnn}
epochs=${2:-200}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s#^dir = .*#dir = \"$dir/run\"#; s/^epochs = .*/epochs = $epochs/" examples/cora-8.toml >"$dir/job.toml"
unset OMPI_MCA_mpi_yield_when_idle OMPI_MCA_mpi_oversubscribe
mpirun --allow-run-as-root --host localhost:8 -np 8 "$bin" -config "$dir/job.toml" >"$dir/log" 2>&1
rc=$?
grep -E "mpi_yield_when_idle|done" "$dir/log"
[ $rc = 0 ] || { cat "$dir/log"; echo "oversubscribe.sh: exit $rc"; exit 1; }
if [ "$(nproc)" -lt 8 ] && ! grep -q "set OMPI_MCA_mpi_yield_when_idle=1" "$dir/log"; then
	echo "oversubscribe.sh: 8 ranks on $(nproc) cores and no yield line"
	exit 1
fi
