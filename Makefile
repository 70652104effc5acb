# scalegnn: build, run the default example, test, benchmark.
#
#   make run     build and train the default job (Cora, Kipf & Welling, 1 rank)
#   make run8    the same on 8 ranks (2x2x2 grid, double permutation)
#   make test    everything CI runs: vet, unit tests, the build variants
#                (nompi, noblas, MPICH), the real MPI checks and a one-node
#                Slurm cluster's (make slurmtest)
#   make bench   kernel, device, epoch and balance benchmarks, and the
#                PyTorch comparison (bench/vs-pytorch.sh) where torch is installed

GO      ?= go
NP      ?= 8
# mpirun needs these as root and when ranks outnumber cores (a laptop, CI).
# The default build links Open MPI, so its launcher is named explicitly
# where Debian installs it beside MPICH's (plain mpirun is whichever the
# mpirun alternative selects).
OMPIRUN ?= $(shell command -v mpirun.openmpi 2>/dev/null || echo mpirun)
MPIRUN  ?= $(OMPIRUN) $(if $(filter 0,$(shell id -u)),--allow-run-as-root) --oversubscribe
# MPICH's hydra launcher, for the -tags mpich build (needs no flags as
# root or when oversubscribed).
MPICHRUN ?= mpirun.mpich
# Packages that may need cgo: the cgo leaves (found by their cgo files:
# collectives/mpi, spmm/cpu) and, on purpose, the root command that links
# them, internal/launch (no cgo of its own; it starts MPI through
# collectives/mpi) and bench, the benchmarks of the cgo backend. Every
# other package must vet with CGO_ENABLED=0; one that starts to import a
# cgo leaf fails.
CGO_USERS := scalegnn scalegnn/internal/launch scalegnn/bench
CGO_PKGS   = $(shell $(GO) list -f '{{if .CgoFiles}}{{.ImportPath}}{{end}}' ./...) $(CGO_USERS)

.PHONY: setup setup-test commands build run run8 test unit purevet variants nompi mpitest threadtest mpichtest slurmtest bench clean

# What the build and the tests need (Open MPI, OpenBLAS, pkg-config; for
# the tests MPICH too): scripts/check-deps.sh checks in a fraction of a
# second, and scripts/setup.sh installs only what is missing, so that
# `make run` and `make test` work on a fresh machine. Off Debian/Ubuntu,
# setup.sh stops with one line saying what to install.
setup:
	@scripts/check-deps.sh 2>/dev/null || scripts/setup.sh
setup-test:
	@scripts/check-deps.sh test 2>/dev/null || scripts/setup.sh

# Every command the tests call (scripts/check-commands.sh: one line for
# each missing one, naming its package), after setup-test has installed
# what check-deps.sh finds missing, so that a missing install step fails
# at once.
commands: setup-test
	@scripts/check-commands.sh

build: setup
	$(GO) build -o scalegnn .

run: build
	rm -rf runs/cora
	./scalegnn -config examples/cora.toml

run8: build
	rm -rf runs/cora-8
	$(MPIRUN) -np $(NP) ./scalegnn -config examples/cora-8.toml

unit: setup
	$(GO) vet ./...
	$(GO) test ./...

# The pure-Go packages build without a C toolchain; -tags nompi makes
# collectives/mpi one of them, and internal/launch, which has no cgo of
# its own, with it.
purevet:
	CGO_ENABLED=0 $(GO) vet $(filter-out $(CGO_PKGS),$(shell $(GO) list ./...))
	CGO_ENABLED=0 $(GO) vet -tags nompi ./collectives/mpi ./internal/launch

# The builds for machines without MPI or BLAS: their own tests, and the
# noblas GEMM (gonum) under the model's tests.
variants: purevet
	CGO_ENABLED=0 $(GO) test -tags nompi ./collectives/mpi
	$(GO) vet -tags nompi,noblas ./...
	$(GO) test -tags noblas ./gcn ./spmm/...

# A -tags nompi binary trains Cora on one rank exactly like the MPI build
# (run in runs/nompi so that its output does not replace runs/cora), and
# under mpirun with 2 ranks it must exit non-zero saying it runs one rank.
nompi: build
	$(GO) build -tags nompi -o scalegnn-nompi .
	@mkdir -p runs/nompi && rm -rf runs/nompi/runs/cora
	cd runs/nompi && ../../scalegnn-nompi -config ../../examples/cora.toml 2>cora-1.log || (cat cora-1.log; exit 1)
	@test -f runs/cora/metrics.jsonl || ./scalegnn -config examples/cora.toml 2>runs/cora-1.log
	./scalegnn compare -tol 0 runs/cora/metrics.jsonl runs/nompi/runs/cora/metrics.jsonl
	@if $(MPIRUN) -np 2 ./scalegnn-nompi -config examples/cora.toml >runs/nompi/np2.log 2>&1; then \
		echo "nompi binary under mpirun -np 2: exit 0, want a failure"; cat runs/nompi/np2.log; exit 1; fi
	@grep -q 'built with -tags nompi and runs one rank, but the launcher started 2' runs/nompi/np2.log || \
		(echo "nompi binary under mpirun -np 2: no clear message"; cat runs/nompi/np2.log; exit 1)
	@echo "nompi: Cora on 1 rank equals the MPI build's; under mpirun -np 2 it refuses:"; grep -m1 'nompi' runs/nompi/np2.log

# The real MPI path: collectives and the model against the serial reference
# on all 10 grids of 8 ranks and on 6 ranks (and the data-parallel
# mini-batch grids), bad input on 8 ranks, an 8-rank Cora run that must
# train exactly like the 1-rank run, the same as a whole-graph mini-batch
# job (exactly again), and a 2-replica mini-batch run.
mpitest: build threadtest
	$(MPIRUN) -np 8 ./scalegnn selftest
	$(MPIRUN) -np 6 ./scalegnn selftest
	scripts/badinput.sh 8
	@mkdir -p runs
	rm -rf runs/cora runs/cora-8 runs/cora-prepared-8 runs/cora-fullbatch-8 runs/cora-minibatch-8 # a used output.dir is refused
	./scalegnn -config examples/cora.toml 2>runs/cora-1.log || (cat runs/cora-1.log; exit 1)
	$(MPIRUN) -np 8 ./scalegnn -config examples/cora-8.toml 2>runs/cora-8.log || (cat runs/cora-8.log; exit 1)
	tail -n 1 runs/cora-1.log runs/cora-8.log
	grep -q '"threads_per_rank": $(CORES),' runs/cora-1.log && grep -q '"threads_per_rank": $(THREADS8),' runs/cora-8.log
	./scalegnn compare -tol 1e-5 runs/cora/metrics.jsonl runs/cora-8/metrics.jsonl
	rm -rf runs/cora-15d-8 && $(MPIRUN) -np 8 ./scalegnn -config examples/cora-15d-8.toml 2>runs/cora-15d-8.log && ./scalegnn compare -tol 1e-5 runs/cora/metrics.jsonl runs/cora-15d-8/metrics.jsonl || (cat runs/cora-15d-8.log; exit 1)
	scripts/memcheck-holds.sh ./scalegnn # under ulimit -v 3000000 the memory check's recommended grid for Cora, hidden 20000, trains or is refused in one line, never out of memory (~30 s; issue 25)
	scripts/stall.sh ./scalegnn # kill -STOP of one rank: the watchdog ends the job (stall_timeout 5 s) within 15 s, exit 6, and no rank outlives it by 3 s
	scripts/resume.sh # checkpoints (45 s): kill -9 and SIGTERM resumes, other grids (mini-batch too), predictions on 8 ranks exact, bad checkpoints
	scripts/resume-15d.sh # 1.5D checkpoints (~1 min): kill -9 and SIGTERM resumes exact, 2x3 and 3D within 1e-5, prepared exact, predictions on 8 ranks
	scripts/resume-midepoch.sh ./scalegnn # a stop part-way through an epoch (SIGTERM to all 8 ranks), then -resume latest: exact (compare -tol 0) for 3D, 4D mini-batch, neighbor, isolated, 1.5D and 1.5D mini-batch (~1-2 min; issue 24)
	scripts/outofcore.sh ./scalegnn 18 # isolated out of core (partitions read from a prepared R-MAT 18) with layer-wise evaluation: equal to the workers holding the graph, 2 ranks and 1 (~1 min; issue 27)
	./scalegnn prepare -q -force -in cora -format builtin -out runs/cora-prepared -blocks 3 -permute double -seed 7
	$(MPIRUN) -np 8 ./scalegnn -config examples/cora-prepared.toml 2>runs/cora-prepared-8.log || (cat runs/cora-prepared-8.log; exit 1)
	./scalegnn compare -tol 0 runs/cora-8/metrics.jsonl runs/cora-prepared-8/metrics.jsonl
	$(MPIRUN) -np 8 ./scalegnn -config testdata/mpi/cora-fullbatch-8.toml 2>runs/cora-fullbatch-8.log || (cat runs/cora-fullbatch-8.log; exit 1)
	./scalegnn compare -tol 1e-5 runs/cora-8/metrics.jsonl runs/cora-fullbatch-8/metrics.jsonl
	$(MPIRUN) -np 8 ./scalegnn -config examples/cora-minibatch-8.toml 2>runs/cora-minibatch-8.log || (cat runs/cora-minibatch-8.log; exit 1)
	tail -n 1 runs/cora-minibatch-8.log
	./scalegnn plot runs/cora runs/cora-8 runs/cora-minibatch-8 -o runs/cora-curves.png

CORES    = $(shell nproc)
THREADS8 = $(shell n=$$(nproc); echo $$(( n / 8 > 1 ? n / 8 : 1 )))
# Node-aware threads (internal/node): bound to a core each, 2 ranks run 1
# thread; unbound, 8 ranks share all the cores (cores/8, at least 1); one
# rank alone runs one thread per core. nproc counts the cores of the
# affinity mask, as scalegnn does. mpitest checks that the Cora runs'
# start-up lines log the same counts (8 ranks under --oversubscribe are
# unbound).
threadtest: build
	@mkdir -p runs
	$(MPIRUN) --bind-to core -np 2 ./scalegnn threads >runs/threads-core-2.txt
	$(MPIRUN) --bind-to none -np 8 ./scalegnn threads >runs/threads-none-8.txt
	./scalegnn threads >runs/threads-1.txt
	@check() { got=$$(grep -c " threads=$$2$$" $$1); test "$$got" = "$$3" || \
		{ echo "threadtest: $$1: want $$3 ranks with threads=$$2:"; cat $$1; exit 1; }; }; \
	check runs/threads-core-2.txt 1 2 && check runs/threads-none-8.txt $(THREADS8) 8 && check runs/threads-1.txt $(CORES) 1
	@echo "threadtest: threads per rank: --bind-to core -np 2: 1; --bind-to none -np 8: $(THREADS8); -np 1: $(CORES)"

# MPICH (Debian's mpich/libmpich-dev, -tags mpich) beside Open MPI: the
# selftest on 8 ranks and the Cora 1-vs-8-rank comparison under hydra, in
# runs/mpich so that the Open MPI runs' output stays. Debian's MPICH
# (ch4:ucx) busy-polls, so 8 ranks on 2 cores train Cora 12x slower than
# Open MPI (0.9 vs 0.075 s/epoch, measured): the comparison runs 40 epochs
# (4 evaluations) of the same jobs instead of 200.
MPICH_EPOCHS ?= 40
mpichtest: setup-test build
	$(GO) build -tags mpich -o scalegnn-mpich .
	$(MPICHRUN) -np 8 ./scalegnn-mpich selftest
	@mkdir -p runs/mpich
	@for f in cora cora-8; do \
		sed 's/^epochs = .*/epochs = $(MPICH_EPOCHS)/' examples/$$f.toml >runs/mpich/$$f.toml; \
		grep -qx 'epochs = $(MPICH_EPOCHS)' runs/mpich/$$f.toml || { echo "mpichtest: no epochs line in examples/$$f.toml"; exit 1; }; \
	done
	cd runs/mpich && ../../scalegnn-mpich -config cora.toml 2>cora-1.log || (cat cora-1.log; exit 1)
	cd runs/mpich && $(MPICHRUN) -np 8 ../../scalegnn-mpich -config cora-8.toml 2>cora-8.log || (cat cora-8.log; exit 1)
	tail -n 1 runs/mpich/cora-1.log runs/mpich/cora-8.log
	./scalegnn compare -tol 1e-5 runs/mpich/runs/cora/metrics.jsonl runs/mpich/runs/cora-8/metrics.jsonl

test: commands unit variants mpitest nompi mpichtest slurmtest

# Slurm (Debian's 22.05, installed by scripts/setup.sh): a one-node cluster
# on localhost (scripts/slurm/up.sh: munged, slurmctld and slurmd, all
# under runs/slurm; needs root), the tests of scripts/slurm/test.sh side
# by side (srun equals mpirun, sbatch examples/slurm/one-node.sbatch, MPICH
# under srun --mpi=pmi2, USR1 at three moments of the sbatch script, and
# the time-limit kill: about 50 s on 2 cores, bounded by slurmctld's
# time-limit pass 30 s after its start), and
# scripts/slurm/down.sh, which stops the daemons by their pids whether
# the tests passed or not. The tasks run at slurmd's priority, which is
# make's: `nice make slurmtest` runs them niced.
slurmtest: setup-test build
	@scripts/check-commands.sh slurm
	$(GO) build -tags mpich -o scalegnn-mpich .
	@trap 'scripts/slurm/down.sh' EXIT; trap 'exit 130' INT TERM HUP; \
	scripts/slurm/up.sh && scripts/slurm/test.sh

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 3x ./spmm/...
	$(GO) test -run '^$$' -bench Epoch -benchtime 3x ./bench
	$(GO) test -run '^$$' -bench MiniBatchPrefetch -benchtime 2x ./bench
	$(GO) test -run '^$$' -bench NeighborSampler -benchtime 20x ./sampler
	GRID4D="1 2 2 2" LIMIT=600 bash bench/neighbor-vs-4d.sh ./scalegnn 20 # neighbor vs 4D on 8 ranks, R-MAT scale 20 (~5 min; 2x2x2 fits 23 GiB where d=2 does not)
	EPOCHS=6 LIMIT=600 bash bench/isolated-vs-4d.sh ./scalegnn 20 # Grappa vs 4D vs neighbor on 8 ranks, R-MAT scale 20 (~10 min; isolated needs ~2.3 GiB a rank)
	bash bench/eval-speed.sh ./scalegnn 19 # one evaluation of 3 SAGE layers on 8 ranks: 3D, neighbor (halo), isolated on its grid and layer-wise, R-MAT scale 19 (issue 27)
	./scalegnn balance -config examples/rmat.toml -blocks 8
	$(GO) test -run '^$$' -bench 'CPU|SpMM' -benchtime 3x ./device
	@if /usr/bin/python3 -c 'import torch' 2>/dev/null; then bash bench/vs-pytorch.sh 16 2; \
	else echo "bench/vs-pytorch.sh skipped: no python3-torch"; fi

clean:
	rm -rf scalegnn scalegnn-nompi scalegnn-mpich runs
