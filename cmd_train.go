package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"

	"scalegnn/checkpoint"
	"scalegnn/collectives"
	"scalegnn/collectives/mpi"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/internal/launch"
	"scalegnn/jobs"
	"scalegnn/perfmodel"
	"scalegnn/spmm/cpu"
)

// runTrain is scalegnn -config job.toml [-grid XxYxZ] [-v] [-log json]: it
// reads the flags (usage errors come before MPI starts) and trains.
func runTrain(args []string, stderr io.Writer) launch.ExitCode {
	fs := flag.NewFlagSet("scalegnn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	config := fs.String("config", "", "job file (TOML)")
	verbose := fs.Bool("v", false, "log on every rank, not only rank 0")
	gridFlag := fs.String("grid", "", "override the job's grid, e.g. 2x2x2, or 2x2x1 (d=2) to set the replicas too")
	logFormat := fs.String("log", "console", "log format: console (for people) or json (one object per line, for machines)")
	resume := fs.String("resume", "", "continue from a checkpoint: its directory, a directory of checkpoints, or latest (the newest good one in the job's checkpoint.dir)")
	if err := fs.Parse(args); err != nil {
		return launch.ExitUsage
	}
	if *logFormat != "console" && *logFormat != "json" {
		fmt.Fprintf(stderr, "scalegnn: -log %q: expected console or json\n", *logFormat)
		return launch.ExitUsage
	}
	if *config == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "scalegnn: need -config job.toml and no other arguments\n%s", usage)
		return launch.ExitUsage
	}
	var override *grid.Shape
	if *gridFlag != "" {
		s, err := grid.ParseShape(*gridFlag)
		if err != nil {
			fmt.Fprintf(stderr, "scalegnn: -grid: %v\n", err)
			return launch.ExitUsage
		}
		if !strings.Contains(*gridFlag, "d=") {
			s.D = 0 // keep the job file's grid.d
		}
		override = &s
	}
	opts := jobs.OutputOptions{Verbose: *verbose, JSON: *logFormat == "json", Resume: *resume != ""}
	sig := launch.Watch(stderr)
	defer sig.Stop()
	return train(*config, override, opts, *resume, sig, os.Stderr)
}

// train runs a job on this rank. Setup errors (job file, output directory,
// grid, data) are agreed on by all ranks so that the job ends cleanly with
// one message and a non-zero exit everywhere, and nothing is written to
// output.dir until every rank has set up. A diverged loss is seen by every
// rank at the same step: the job ends cleanly with ExitDiverged. Any other
// error once training runs aborts the job, because the other ranks may be
// blocked in a collective (launch.WithMPI).
//
// resume, when not empty, is -resume's argument: the model continues from
// that checkpoint. sig (nil: signals are not watched) says whether a
// signal asks the job to stop: the ranks agree on it at a step boundary,
// write a checkpoint and exit with ExitInterrupted.
func train(path string, override *grid.Shape, opts jobs.OutputOptions, resume string, sig *launch.Signals, stderr io.Writer) launch.ExitCode {
	diverged, interrupted := false, false
	code := launch.WithMPI(stderr, func(world collectives.Comm, agree func(error) error) error {
		rank := world.Rank()
		log := jobs.NewLogger(rank, opts.Verbose, opts.JSON)
		defer log.Sync()

		info, cfg, err := launch.LoadJob(world, path, override, log)
		if err == nil && rank == 0 {
			// Refuse a used output.dir before loading any data.
			err = jobs.CheckOutputDir(cfg, opts)
		}
		if err == nil {
			err = launch.CheckMemory(cfg, rank, info) // refuse a job that cannot fit, before loading
		}
		if err := agree(err); err != nil {
			return err
		}
		goLimit, goLimitFrom := launch.SoftMemoryLimit(cfg, info.RanksPerNode)
		threads := launch.RankThreads(cfg.Runtime.Threads, info)
		rd, err := launch.OpenDevice(launch.JobDevice(cfg, threads), rank, info, log)
		if err := agree(err); err != nil {
			return err
		}
		rd.Measure() // every rank's device is open
		if err := agree(rd.CheckMemory(cfg, rank, info)); err != nil {
			return err
		}
		dev := rd.Dev
		if rank == 0 {
			log.Info("starting", append([]zap.Field{zap.Int("ranks", world.Size()), zap.String("config", path),
				zap.String("device", dev.Describe()), zap.String("collectives", device.CollectivePath(dev, world))},
				launch.NodeFields(info, threads, cpu.BLASConfig())...)...)
			if advice := cpu.BLASAdvice(); advice != "" && dev.Name() != "cuda" {
				log.Warn(advice)
			}
			log.Info("job", cfg.Summary()...)
			if goLimit > 0 {
				log.Info("Go memory limit", zap.String("per_rank", perfmodel.FormatBytes(goLimit)), zap.String("from", goLimitFrom))
			}
		}
		// A stall is recorded in summary.json once the run is open.
		var live atomic.Pointer[jobs.Job]
		stalled := func(msg string) {
			if j := live.Load(); j != nil {
				j.Stalled(msg)
			}
		}
		wd, watched := launch.StartWatchdog(cfg, world, stderr, stalled) // runtime.stall_timeout
		defer wd.Stop()
		var job *jobs.Job
		err = rd.Guard(cfg, rank, info, func() (err error) {
			job, err = jobs.Setup(cfg, watched, dev, log)
			return err
		})
		if err := agree(err); err != nil {
			return err
		}
		wd.Done() // loaded
		if resume != "" {
			dir, err := jobs.ResolveCheckpoint(world, cfg, resume, log)
			if err == nil {
				var man *checkpoint.Manifest
				if man, err = job.LoadCheckpoint(dir); err == nil && rank == 0 {
					log.Info("resuming", zap.String("checkpoint", dir), zap.Int("epoch", man.Epoch), zap.Int("step", man.Step))
				}
			}
			if err := agree(err); err != nil {
				return err
			}
		}
		if sig != nil {
			job.Interrupt = sig.Received
		}
		// Every rank has set up: rank 0 writes output.dir now.
		if err := agree(job.OpenOutput(opts)); err != nil {
			return err
		}
		live.Store(job)
		if sig != nil {
			// The first signal is in summary.json at once: a launcher's
			// kill may come before the step boundary (docs/checkpoints.md).
			sig.OnFirst(func(name string) {
				if err := job.Interrupting(name); err != nil {
					fmt.Fprintf(stderr, "scalegnn: %v\n", err)
				}
			})
		}
		if path := os.Getenv("SCALEGNN_CPUPROFILE"); path != "" && rank == 0 {
			// Rank 0's CPU profile of the training loop, for go tool pprof.
			if f, err := os.Create(path); err == nil {
				if pprof.StartCPUProfile(f) == nil {
					defer pprof.StopCPUProfile()
				}
			}
		}
		err = rd.Guard(cfg, rank, info, func() (err error) {
			_, err = job.Train()
			return err
		})
		if path := os.Getenv("SCALEGNN_MEMPROFILE"); path != "" && rank == 0 {
			// Rank 0's heap after training (live objects at the last GC
			// and their allocation sites), for go tool pprof.
			if f, err := os.Create(path); err == nil {
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
		var d *jobs.DivergedError
		if errors.As(err, &d) {
			// Every rank stopped at this step (jobs.DivergedError); one
			// message, then a clean exit everywhere.
			diverged = true
			if rank == 0 {
				fmt.Fprintf(stderr, "scalegnn: %v\n", err)
			}
			return launch.ErrAgreed
		}
		var ie *jobs.InterruptedError
		if errors.As(err, &ie) {
			interrupted = true
			if rank == 0 {
				fmt.Fprintf(stderr, "scalegnn: %v\n", err)
				if ie.Checkpoint != "" {
					fmt.Fprintf(stderr, "scalegnn: resume with: %s\n", resumeCommand(world.Size(), ie.Checkpoint))
				}
			}
			return launch.ErrAgreed
		}
		return err
	})
	switch {
	case diverged && code == launch.ExitFailed:
		return launch.ExitDiverged
	case interrupted && code == launch.ExitFailed:
		return launch.ExitInterrupted
	}
	return code
}

// resumeCommand is the command line that continues this run from dir:
// this process's arguments with -resume set, under the launcher that
// started it (mpi.ReadLaunch: srun -n N, with the step's --mpi; mpirun
// -np N; hydra's mpiexec -n N), or alone on one rank without a launcher.
// The binary is os.Args[0] as the shell would take it from the working
// directory: srun passes "/run/dir/./scalegnn" where the user typed
// "./scalegnn".
func resumeCommand(ranks int, dir string) string {
	cwd, _ := os.Getwd()
	return resumeLine(os.Args, ranks, dir, os.Getenv, cwd)
}

// resumeLine is resumeCommand on the given arguments, environment and
// working directory.
func resumeLine(argv []string, ranks int, dir string, getenv func(string) string, cwd string) string {
	args := []string{binaryPath(argv[0], cwd)}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "-resume" || a == "--resume" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-resume=") || strings.HasPrefix(a, "--resume=") {
			continue
		}
		args = append(args, a)
	}
	cmd := strings.Join(append(args, "-resume", dir), " ")
	l, _ := mpi.ReadLaunch(getenv)
	switch {
	case l.Launcher == "srun":
		srun := fmt.Sprintf("srun -n %d", ranks)
		if m := getenv("SLURM_MPI_TYPE"); m != "" {
			srun += " --mpi=" + m
		}
		return srun + " " + cmd
	case l.Launcher == "hydra's mpiexec":
		return fmt.Sprintf("mpiexec -n %d %s", ranks, cmd)
	case ranks > 1 || l.Launcher != "":
		return fmt.Sprintf("mpirun -np %d %s", ranks, cmd)
	}
	return cmd
}

// binaryPath is arg0 cleaned, and relative to cwd ("./scalegnn") when it
// is an absolute path below cwd.
func binaryPath(arg0, cwd string) string {
	if !filepath.IsAbs(arg0) {
		return arg0
	}
	p := filepath.Clean(arg0)
	if cwd != "" {
		if rel, err := filepath.Rel(cwd, p); err == nil && filepath.IsLocal(rel) {
			return "." + string(filepath.Separator) + rel
		}
	}
	return p
}
