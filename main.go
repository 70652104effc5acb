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
	"fmt"
	"io"
	"os"

	"scalegnn/internal/launch"
)

const usage = `usage:
  scalegnn -config job.toml [-grid XxYxZ] [-v] [-log json] [-resume DIR|latest]
                                            train (launch with mpirun/srun, one process per rank);
                                            -grid overrides the job file's [grid] x, y, z
                                            (and d, written "XxYxZ (d=D)" or "d=D XxYxZ");
                                            -resume continues from a checkpoint, on any grid
  scalegnn predict -config job.toml -checkpoint DIR [-out preds.npy] [-embeddings LAYER]
                                            class probabilities (N x classes) or a hidden layer's output
                                            as .npy in vertex order (launch with mpirun/srun)
  scalegnn balance -config job.toml [-blocks 8]
                                            nonzero balance of the job's graph with none/single/double permutation
  scalegnn prepare -in SRC -format F -out DIR [-blocks S] [-permute double -seed K]
                                            write a prepared dataset that every rank reads only its shards of
                                            (scalegnn prepare -h lists the formats)
  scalegnn dataset info DIR [-grid XxYxZ | -blocks B]
                                            a prepared dataset's metadata and nonzero balance
  scalegnn plot RUN_DIR... [-o curves.png]  loss, accuracy and epoch-time curves of one or more runs
  scalegnn compare [-tol 1e-4] a/ b/          (run directories, or a/metrics.jsonl b/metrics.jsonl)
                                            check that two runs (e.g. 1 and 8 ranks) trained the same
  scalegnn selftest                         check the MPI collectives and the model against the serial
                                            reference on every grid of the world size (launch with mpirun)
  scalegnn threads                          every rank's ranks per node, cores, ranks sharing them and threads
                                            (launch with mpirun/srun as the job will be, to check the binding)
  scalegnn perfmodel predict -config job.toml -ranks G [-ranks-per-node K] [-mem-per-rank 40GiB]
                   [-machine machine.toml] [-top 10] [-json] [-plot out.png]
                                            predicted epoch time and memory of every grid of G ranks, best first
  scalegnn perfmodel calibrate -out machine.toml [-quick]
                                            fit the performance model to this machine (launch with mpirun/srun)
  scalegnn perfmodel score -config job.toml -ranks G [-machine m.toml] runs/*/
                                            predicted vs measured epoch times (Spearman, best-grid gap)
`

func main() { os.Exit(int(run(os.Args[1:], os.Stderr))) }

func run(args []string, stderr io.Writer) launch.ExitCode {
	if launch.LauncherRank() > 0 {
		// Usage errors come before MPI starts, and every rank would print
		// the same one; rank 0 speaks for all of them.
		stderr = io.Discard
	}
	return dispatch(args, stderr)
}

func dispatch(args []string, stderr io.Writer) launch.ExitCode {
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		switch args[0] {
		case "predict":
			return runInference(args[1:], stderr)
		case "balance":
			return runBalance(args[1:], stderr)
		case "compare":
			return runCompare(args[1:], os.Stdout, stderr)
		case "plot":
			return runPlot(args[1:], os.Stdout, stderr)
		case "prepare":
			return runPrepare(args[1:], stderr)
		case "dataset":
			return runDataset(args[1:], os.Stdout, stderr)
		case "selftest":
			return runSelftest(os.Stderr)
		case "threads":
			return runThreads(os.Stdout, stderr)
		case "perfmodel":
			return runPerfmodel(args[1:], os.Stdout, stderr)
		case "help":
			fmt.Fprint(stderr, usage)
			return launch.ExitOK
		}
		fmt.Fprintf(stderr, "scalegnn: unknown command %q\n%s", args[0], usage)
		return launch.ExitUsage
	}
	return runTrain(args, stderr)
}
