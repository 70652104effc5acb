package main

import (
	"flag"
	"fmt"
	"io"

	"scalegnn/grid"
	"scalegnn/internal/launch"
	"scalegnn/permute"
	"scalegnn/prepared"
)

const datasetUsage = `usage: scalegnn dataset info DIR [-grid XxYxZ [-layers L] | -blocks B]
  prints a prepared dataset's metadata and, with -grid or -blocks, the nonzero balance
  (max/mean nonzeros over the blocks) of its adjacency shards on that grid
`

// runDataset runs the dataset subcommands. It needs no MPI.
func runDataset(args []string, stdout, stderr io.Writer) launch.ExitCode {
	if len(args) == 0 || args[0] != "info" {
		fmt.Fprint(stderr, datasetUsage)
		return launch.ExitUsage
	}
	fs := flag.NewFlagSet("scalegnn dataset info", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, datasetUsage) }
	gridFlag := fs.String("grid", "", "balance of every layer's shards on this XxYxZ grid")
	layers := fs.Int("layers", 3, "with -grid: the number of GCN layers")
	blocks := fs.Int("blocks", 0, "balance over B×B blocks")
	// Accept the directory before or after the flags.
	rest := args[1:]
	var dir string
	if len(rest) > 0 && len(rest[0]) > 0 && rest[0][0] != '-' {
		dir, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return launch.ExitUsage
	}
	if dir == "" && fs.NArg() == 1 {
		dir = fs.Arg(0)
	} else if fs.NArg() > 0 || dir == "" {
		fmt.Fprint(stderr, datasetUsage)
		return launch.ExitUsage
	}
	var shape grid.Shape
	if *gridFlag != "" {
		var err error
		if shape, err = grid.ParseShape(*gridFlag); err != nil || shape.D != 1 {
			fmt.Fprintf(stderr, "scalegnn dataset info: -grid %q: expected XxYxZ with positive integers, e.g. 2x2x2\n", *gridFlag)
			return launch.ExitUsage
		}
	}
	if *blocks < 0 || *layers < 1 || (*blocks > 0 && *gridFlag != "") {
		fmt.Fprintln(stderr, "scalegnn dataset info: use one of -grid and -blocks (B >= 1), and -layers >= 1")
		return launch.ExitUsage
	}
	d, err := prepared.Open(dir, prepared.LoadOptions{})
	if err != nil {
		return fail(stderr, err)
	}
	m := d.Meta
	fmt.Fprintf(stdout, "dataset      %s (%s)\n", dir, m.Name)
	fmt.Fprintf(stdout, "source       %s %s\n             %s\n             sha256 %s\n", m.Source.Format, m.Source.Path, m.Source.Description, m.Source.SHA256)
	fmt.Fprintf(stdout, "vertices     %d\n", m.Nodes)
	fmt.Fprintf(stdout, "nonzeros     %d (normalised adjacency with self loops; %d edges stored as directed entries)\n", m.NNZ, m.Edges)
	dtype := prepared.FeaturesFloat32
	if m.BF16Features() {
		dtype = prepared.FeaturesBF16
	}
	fmt.Fprintf(stdout, "features     %d (%s, %d bytes each on disk)\nclasses      %d (multi-label: %v)\n", m.Features, dtype, m.FeatureBytes(), m.Classes, m.MultiLabel)
	fmt.Fprintf(stdout, "split        train %d, val %d, test %d\n", m.Train, m.Val, m.Test)
	fmt.Fprintf(stdout, "adjacency    symmetric %v, weighted %v, %d orientation(s)\n", m.Symmetric, m.Weighted, m.Orientations)
	perm := m.Permute.Scheme.String()
	if m.Permute.Scheme != permute.None {
		perm += fmt.Sprintf(", seed %d", m.Permute.Seed)
	}
	fmt.Fprintf(stdout, "permutation  %s\n", perm)
	var bytes int64
	for _, f := range m.Files {
		bytes += f.Bytes
	}
	st := prepared.MetaBalance(m)
	fmt.Fprintf(stdout, "storage      %dx%d blocks, %d files, %.1f MiB; stored blocks max/mean nonzeros %.3f\n",
		m.Blocks, m.Blocks, len(m.Files)+1, float64(bytes)/(1<<20), st.Imbalance)
	switch {
	case *blocks > 0:
		for k := range 2 {
			if k == 1 && m.Permute.Scheme != permute.Double {
				break
			}
			st, err := d.Balance(k, *blocks, *blocks)
			if err != nil {
				return fail(stderr, err)
			}
			fmt.Fprintf(stdout, "balance      %s: %v\n", shardName(k), st)
		}
	case *gridFlag != "":
		two := m.Permute.Scheme == permute.Double
		for _, sh := range grid.ShardsOf(*layers, two) {
			r, p := sh.Axes()
			st, err := d.Balance(sh.RowOrder(), shape.Size(r), shape.Size(p))
			if err != nil {
				return fail(stderr, err)
			}
			fmt.Fprintf(stdout, "balance      layer %d on %dx%dx%d (%s): %v\n", sh.FirstUse(two), shape.X, shape.Y, shape.Z, shardName(sh.RowOrder()), st)
		}
	}
	return launch.ExitOK
}

func shardName(k int) string {
	if k == 0 {
		return "Â[p1][:, p2]"
	}
	return "Â[p2][:, p1]"
}
