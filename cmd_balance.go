package main

import (
	"flag"
	"fmt"
	"io"

	"scalegnn/dataset"
	"scalegnn/internal/launch"
	"scalegnn/jobfile"
	"scalegnn/permute"
)

// runBalance prints the nonzero balance (max/mean over a blocks×blocks
// split) of the job's normalised adjacency with no, single and double
// permutation: the statistic of Plexus Table 3. It needs no MPI.
func runBalance(args []string, stderr io.Writer) launch.ExitCode {
	fs := flag.NewFlagSet("scalegnn balance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "", "job file whose dataset and permute.seed are used")
	blocks := fs.Int("blocks", 8, "split rows and columns into this many blocks each")
	if err := fs.Parse(args); err != nil {
		return launch.ExitUsage
	}
	if *config == "" || *blocks < 1 {
		fmt.Fprintln(stderr, "scalegnn balance: need -config job.toml and -blocks >= 1")
		return launch.ExitUsage
	}
	cfg, err := jobfile.LoadConfig(*config)
	if err != nil {
		fmt.Fprintf(stderr, "scalegnn: %v\n", err)
		return launch.ExitFailed
	}
	g, err := jobfile.LoadGraph(cfg.Dataset)
	if err != nil {
		fmt.Fprintf(stderr, "scalegnn: %v\n", err)
		return launch.ExitFailed
	}
	adj := dataset.NormalizeGCN(g.Adj)
	rep := permute.BalanceReport(adj, *blocks, uint64(cfg.Permute.Seed))
	fmt.Fprintf(stderr, "graph: %d vertices, %d nonzeros (with self loops); %dx%d blocks\n", g.N, adj.NNZ(), *blocks, *blocks)
	fmt.Fprintf(stderr, "%-8s %12s %14s %10s\n", "scheme", "max nnz", "mean nnz", "max/mean")
	for i, s := range []permute.Scheme{permute.None, permute.Single, permute.Double} {
		fmt.Fprintf(stderr, "%-8v %12d %14.1f %10.3f\n", s, rep[i].Max, rep[i].Mean, rep[i].Imbalance)
	}
	return launch.ExitOK
}
