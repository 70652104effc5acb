# scalegnn: build, run the default example, test, benchmark.
#
#   make run     build and train the default job (Cora, Kipf & Welling, 1 rank)
#   make run8    the same on 8 ranks (2x2x2 grid, double permutation)
#   make test    everything CI runs: vet, unit tests, and the real MPI checks
#   make bench   kernel and balance benchmarks

GO      ?= go
NP      ?= 8
# mpirun needs these as root and when ranks outnumber cores (a laptop, CI).
MPIRUN  ?= mpirun $(if $(filter 0,$(shell id -u)),--allow-run-as-root) --oversubscribe

.PHONY: build run run8 test unit mpitest bench clean

build:
	$(GO) build -o scalegnn .

run: build
	./scalegnn -config examples/cora.toml

run8: build
	$(MPIRUN) -np $(NP) ./scalegnn -config examples/cora-8.toml

unit:
	$(GO) vet ./...
	$(GO) test ./...

# The real MPI path: collectives and the model against the serial reference
# on all 10 grids of 8 ranks and on 6 ranks (and the data-parallel
# mini-batch grids), bad input on 8 ranks, an 8-rank Cora run that must
# train exactly like the 1-rank run, the same as a whole-graph mini-batch
# job (exactly again), and a 2-replica mini-batch run.
mpitest: build
	$(MPIRUN) -np 8 ./scalegnn selftest
	$(MPIRUN) -np 6 ./scalegnn selftest
	scripts/badinput.sh 8
	@mkdir -p runs
	./scalegnn -config examples/cora.toml 2>runs/cora-1.log || (cat runs/cora-1.log; exit 1)
	$(MPIRUN) -np 8 ./scalegnn -config examples/cora-8.toml 2>runs/cora-8.log || (cat runs/cora-8.log; exit 1)
	tail -n 1 runs/cora-1.log runs/cora-8.log
	./scalegnn compare -tol 1e-5 runs/cora/metrics.jsonl runs/cora-8/metrics.jsonl
	./scalegnn prepare -q -force -in cora -format builtin -out runs/cora-prepared -blocks 3 -permute double -seed 7
	$(MPIRUN) -np 8 ./scalegnn -config examples/cora-prepared.toml 2>runs/cora-prepared-8.log || (cat runs/cora-prepared-8.log; exit 1)
	./scalegnn compare -tol 0 runs/cora-8/metrics.jsonl runs/cora-prepared-8/metrics.jsonl
	$(MPIRUN) -np 8 ./scalegnn -config testdata/mpi/cora-fullbatch-8.toml 2>runs/cora-fullbatch-8.log || (cat runs/cora-fullbatch-8.log; exit 1)
	./scalegnn compare -tol 1e-5 runs/cora-8/metrics.jsonl runs/cora-fullbatch-8/metrics.jsonl
	$(MPIRUN) -np 8 ./scalegnn -config examples/cora-minibatch-8.toml 2>runs/cora-minibatch-8.log || (cat runs/cora-minibatch-8.log; exit 1)
	tail -n 1 runs/cora-minibatch-8.log

test: unit mpitest

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 3x ./spmm/... ./gcn
	$(GO) test -run '^$$' -bench MiniBatchPrefetch -benchtime 2x ./jobs
	./scalegnn balance -config examples/rmat.toml -blocks 8

clean:
	rm -rf scalegnn runs
