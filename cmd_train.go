package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/internal/node"
	"scalegnn/jobs"
	"scalegnn/spmm/cpu"
)

// Exit codes of a training run (README, "Output").
const (
	exitOK       = 0
	exitFailed   = 1 // an error: bad job file or data, or a failure in training
	exitUsage    = 2 // bad command line
	exitInternal = 3 // a panic (withMPI)
	exitDiverged = 4 // the loss became NaN or Inf (summary.json: "diverged")
)

// runTrain is scalegnn -config job.toml [-grid XxYxZ] [-v] [-log json]: it
// reads the flags (usage errors come before MPI starts) and trains.
func runTrain(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("scalegnn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	config := fs.String("config", "", "job file (TOML)")
	verbose := fs.Bool("v", false, "log on every rank, not only rank 0")
	gridFlag := fs.String("grid", "", "override the job's grid, e.g. 2x2x2, or 2x2x1 (d=2) to set the replicas too")
	logFormat := fs.String("log", "console", "log format: console (for people) or json (one object per line, for machines)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *logFormat != "console" && *logFormat != "json" {
		fmt.Fprintf(stderr, "scalegnn: -log %q: expected console or json\n", *logFormat)
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
	opts := jobs.OutputOptions{Verbose: *verbose, JSON: *logFormat == "json"}
	return train(*config, override, opts, os.Stderr)
}

// train runs a job on this rank. Setup errors (job file, output directory,
// grid, data) are agreed on by all ranks so that the job ends cleanly with
// one message and a non-zero exit everywhere, and nothing is written to
// output.dir until every rank has set up. A diverged loss is seen by every
// rank at the same step: the job ends cleanly with exitDiverged. Any other
// error once training runs aborts the job, because the other ranks may be
// blocked in a collective (withMPI).
func train(path string, override *grid.Shape, opts jobs.OutputOptions, stderr io.Writer) int {
	diverged := false
	code := withMPI(stderr, func(world collectives.Comm, agree func(error) error) error {
		rank := world.Rank()
		log := jobs.NewLogger(rank, opts.Verbose, opts.JSON)
		defer log.Sync()

		// Collective on every rank, before anything can fail on one.
		info, nerr := node.Detect(world)
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
		if err == nil {
			err = nerr
		}
		if err == nil && cfg.Grid.Auto {
			err = jobs.ResolveAutoGrid(cfg, world.Size(), info.RanksPerNode, log)
		}
		if err == nil && rank == 0 {
			// Refuse a used output.dir before loading any data.
			err = jobs.CheckOutputDir(cfg, opts)
		}
		if err := agree(err); err != nil {
			return err
		}
		threads := rankThreads(cfg.Runtime.Threads, info)
		dev := device.Host(threads)
		if rank == 0 {
			log.Info("starting", append([]zap.Field{zap.Int("ranks", world.Size()), zap.String("config", path),
				zap.String("device", dev.Describe())}, nodeFields(info, threads, cpu.BLASConfig())...)...)
			log.Info("job", cfg.Summary()...)
		}
		job, err := jobs.Setup(cfg, world, dev, log)
		if err := agree(err); err != nil {
			return err
		}
		// Every rank has set up: rank 0 writes output.dir now.
		if err := agree(job.OpenOutput(opts)); err != nil {
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
		var d *jobs.DivergedError
		if errors.As(err, &d) {
			// Every rank stopped at this step (jobs.DivergedError); one
			// message, then a clean exit everywhere.
			diverged = true
			if rank == 0 {
				fmt.Fprintf(stderr, "scalegnn: %v\n", err)
			}
			return errAgreed
		}
		return err
	})
	if diverged && code == exitFailed {
		return exitDiverged
	}
	return code
}
