package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/grid"
	"scalegnn/jobs"
	"scalegnn/spmm/cpu"
)

// runTrain is scalegnn -config job.toml [-grid XxYxZ] [-v]: it reads the
// flags (usage errors come before MPI starts) and trains.
func runTrain(args []string, stderr io.Writer) int {
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
