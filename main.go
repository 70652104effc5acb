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
	"runtime/pprof"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/grid"
	"scalegnn/jobs"
	"scalegnn/spmm/cpu"
)

const usage = `usage:
  scalegnn -config job.toml [-grid XxYxZ] [-v]
                                            train (launch with mpirun/srun, one process per rank);
                                            -grid overrides the job file's [grid] x, y, z
                                            (and d, written "XxYxZ (d=D)" or "d=D XxYxZ")
  scalegnn balance -config job.toml [-blocks 8]
                                            nonzero balance of the job's graph with none/single/double permutation
  scalegnn prepare -in SRC -format F -out DIR [-blocks S] [-permute double -seed K]
                                            write a prepared dataset that every rank reads only its shards of
                                            (scalegnn prepare -h lists the formats)
  scalegnn dataset info DIR [-grid XxYxZ | -blocks B]
                                            a prepared dataset's metadata and nonzero balance
  scalegnn compare [-tol 1e-4] a/ b/          (run directories, or a/metrics.jsonl b/metrics.jsonl)
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
	gridFlag := fs.String("grid", "", "override the job's grid, e.g. 2x2x2, or 2x2x1 (d=2) to set the replicas too")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *config == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "scalegnn: need -config job.toml and no other arguments\n%s", usage)
		return 2
	}
	var override *grid.Shape
	if *gridFlag != "" {
		s, err := grid.ParseShape(*gridFlag)
		if err != nil {
			fmt.Fprintf(stderr, "scalegnn: -grid: %v\n", err)
			return 2
		}
		if !strings.Contains(*gridFlag, "d=") {
			s.D = 0 // keep the job file's grid.d
		}
		override = &s
	}
	return train(*config, override, *verbose, os.Stderr)
}

// train runs a job on this rank. Setup errors (job file, grid, data) are
// agreed on by all ranks so that the job ends cleanly with one message and
// a non-zero exit everywhere; an error once training runs aborts the job,
// because the other ranks may be blocked in a collective (withMPI).
func train(path string, override *grid.Shape, verbose bool, stderr io.Writer) int {
	return withMPI(stderr, func(world collectives.Comm, agree func(error) error) error {
		rank := world.Rank()
		log := jobs.NewLogger(rank, verbose)
		defer log.Sync()

		cfg, err := jobs.LoadConfig(path)
		if err == nil && override != nil {
			cfg.Grid.X, cfg.Grid.Y, cfg.Grid.Z = override.X, override.Y, override.Z
			if override.D > 0 {
				cfg.Grid.D = override.D
			}
			cfg.Grid.Auto = false
			err = cfg.Validate()
		}
		if err == nil {
			err = cfg.CheckWorld(world.Size())
		}
		if err == nil && cfg.Grid.Auto {
			err = jobs.ResolveAutoGrid(cfg, world.Size(), localRanks(world.Size()), log)
		}
		if err := agree(err); err != nil {
			return err
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
		if err := agree(err); err != nil {
			return err
		}
		if path := os.Getenv("SCALEGNN_CPUPROFILE"); path != "" && rank == 0 {
			// Rank 0's CPU profile of the training loop, for go tool pprof.
			if f, err := os.Create(path); err == nil {
				if pprof.StartCPUProfile(f) == nil {
					defer pprof.StopCPUProfile()
				}
			}
		}
		_, err = job.Train()
		return err
	})
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
