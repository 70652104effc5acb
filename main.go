// Command scalegnn trains graph convolutional networks on a 3D process grid
// (Plexus) with MPI, one process per rank:
//
//	mpirun -np 8 scalegnn -config job.toml
//	srun scalegnn -config job.toml
//	scalegnn balance -config job.toml -blocks 8
//
// See README.md and docs/jobfile.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/collectives/mpi"
	"scalegnn/jobs"
	"scalegnn/spmm/cpu"
)

const usage = `usage:
  scalegnn -config job.toml [-grid XxYxZ] [-v]
                                            train (launch with mpirun/srun, one process per rank);
                                            -grid overrides the job file's [grid] x, y, z
  scalegnn balance -config job.toml [-blocks 8]
                                            nonzero balance of the job's graph with none/single/double permutation
  scalegnn prepare -in SRC -format F -out DIR [-blocks S] [-permute double -seed K]
                                            write a prepared dataset that every rank reads only its shards of
                                            (scalegnn prepare -h lists the formats)
  scalegnn dataset info DIR [-grid XxYxZ | -blocks B]
                                            a prepared dataset's metadata and nonzero balance
  scalegnn compare a/metrics.jsonl b/metrics.jsonl [-tol 1e-4]
                                            check that two runs (e.g. 1 and 8 ranks) trained the same
  scalegnn selftest                         check the MPI collectives and the model against the serial
                                            reference on every grid of the world size (launch with mpirun)
  scalegnn perfmodel predict -config job.toml -ranks G [-ranks-per-node K] [-mem-per-rank 40GiB]
                   [-machine machine.toml] [-top 10] [-json] [-plot out.png]
                                            predicted epoch time and memory of every grid of G ranks, best first
  scalegnn perfmodel calibrate -out machine.toml [-quick]
                                            fit the performance model to this machine (launch with mpirun/srun)
  scalegnn perfmodel score -config job.toml -ranks G [-machine m.toml] runs/*/
                                            predicted vs measured epoch times (Spearman, best-grid gap)
`

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

func run(args []string, stderr io.Writer) int {
	if launcherRank() > 0 {
		// Usage errors come before MPI starts, and every rank would print
		// the same one; rank 0 speaks for all of them.
		stderr = io.Discard
	}
	return dispatch(args, stderr)
}

func dispatch(args []string, stderr io.Writer) int {
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		switch args[0] {
		case "balance":
			return runBalance(args[1:], stderr)
		case "compare":
			return runCompare(args[1:], os.Stdout, stderr)
		case "prepare":
			return runPrepare(args[1:], stderr)
		case "dataset":
			return runDataset(args[1:], os.Stdout, stderr)
		case "selftest":
			return runSelftest(os.Stderr)
		case "perfmodel":
			return runPerfmodel(args[1:], os.Stdout, stderr)
		case "help":
			fmt.Fprint(stderr, usage)
			return 0
		}
		fmt.Fprintf(stderr, "scalegnn: unknown command %q\n%s", args[0], usage)
		return 2
	}
	fs := flag.NewFlagSet("scalegnn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	config := fs.String("config", "", "job file (TOML)")
	verbose := fs.Bool("v", false, "log on every rank, not only rank 0")
	gridFlag := fs.String("grid", "", "override the job's grid, e.g. 2x2x2")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *config == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "scalegnn: need -config job.toml and no other arguments\n%s", usage)
		return 2
	}
	var override *[3]int
	if *gridFlag != "" {
		var g [3]int
		if n, err := fmt.Sscanf(*gridFlag, "%dx%dx%d", &g[0], &g[1], &g[2]); n != 3 || err != nil || g[0] < 1 || g[1] < 1 || g[2] < 1 {
			fmt.Fprintf(stderr, "scalegnn: -grid %q: expected XxYxZ with positive integers, e.g. 2x2x2\n", *gridFlag)
			return 2
		}
		override = &g
	}
	return train(*config, override, *verbose, os.Stderr)
}

// train runs a job on this rank. Setup errors (job file, grid, data) are
// agreed on by all ranks so that the job ends cleanly with one message and
// a non-zero exit everywhere; an error once training runs aborts the job,
// because the other ranks may be blocked in a collective.
func train(path string, grid *[3]int, verbose bool, stderr io.Writer) (code int) {
	world, err := mpi.Init()
	if err != nil {
		fmt.Fprintf(stderr, "scalegnn: %v\n", err)
		return 1
	}
	rank := world.Rank()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "scalegnn: rank %d: internal error: %v (set SCALEGNN_TRACEBACK=1 for a stack trace)\n", rank, r)
			if os.Getenv("SCALEGNN_TRACEBACK") != "" {
				debug.PrintStack()
			}
			world.Abort(3)
		}
	}()
	log := jobs.NewLogger(rank, verbose)
	defer log.Sync()

	cfg, err := jobs.LoadConfig(path)
	if err == nil && grid != nil {
		cfg.Grid.X, cfg.Grid.Y, cfg.Grid.Z = grid[0], grid[1], grid[2]
		cfg.Grid.Auto = false
		err = cfg.Validate()
	}
	if err == nil {
		err = cfg.CheckWorld(world.Size())
	}
	if err == nil && cfg.Grid.Auto {
		err = jobs.ResolveAutoGrid(cfg, world.Size(), localRanks(world.Size()), log)
	}
	if agreeFailed(world, err, stderr) {
		return finalize(1, stderr)
	}
	threads := cfg.Runtime.Threads
	if threads <= 0 {
		threads = max(1, runtime.NumCPU()/localRanks(world.Size()))
	}
	be := cpu.New(threads)
	if rank == 0 {
		log.Info("starting", zap.Int("ranks", world.Size()), zap.String("config", path),
			zap.Int("threads_per_rank", threads), zap.String("blas", cpu.BLASConfig()))
		log.Info("job", cfg.Summary()...)
	}
	job, err := jobs.Setup(cfg, world, be, threads, log)
	if agreeFailed(world, err, stderr) {
		return finalize(1, stderr)
	}
	if path := os.Getenv("SCALEGNN_CPUPROFILE"); path != "" && rank == 0 {
		// Rank 0's CPU profile of the training loop, for go tool pprof.
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	if _, err := job.Train(); err != nil {
		fmt.Fprintf(stderr, "scalegnn: rank %d: %v\n", rank, err)
		world.Abort(1)
		return 1
	}
	return finalize(0, stderr)
}

// agreeFailed tells every rank whether any rank failed (err != nil) and has
// the lowest failing rank print its error, so that a mistake every rank
// makes (a bad job file) is reported once.
func agreeFailed(world collectives.Comm, err error, stderr io.Writer) bool {
	first := []int64{int64(world.Size())}
	if err != nil {
		first[0] = int64(world.Rank())
	}
	if aerr := world.AllReduceI64(first, collectives.Min); aerr != nil {
		fmt.Fprintf(stderr, "scalegnn: rank %d: %v\n", world.Rank(), aerr)
		world.Abort(1)
	}
	if first[0] == int64(world.Size()) {
		return false
	}
	if err != nil && first[0] == int64(world.Rank()) {
		if world.Size() > 1 {
			fmt.Fprintf(stderr, "scalegnn: rank %d: %v\n", world.Rank(), err)
		} else {
			fmt.Fprintf(stderr, "scalegnn: %v\n", err)
		}
	}
	return true
}

func finalize(code int, stderr io.Writer) int {
	if err := mpi.Finalize(); err != nil {
		fmt.Fprintf(stderr, "scalegnn: %v\n", err)
		return max(code, 1)
	}
	return code
}

// launcherRank returns this process's rank as mpirun or srun announce it in
// the environment, or 0 when started alone.
func launcherRank() int {
	for _, v := range []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil {
			return n
		}
	}
	return 0
}

// localRanks guesses how many ranks share this node from the launchers'
// environment, to split the cores between them.
func localRanks(world int) int {
	for _, v := range []string{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil && n > 0 {
			return n
		}
	}
	return 1
}
