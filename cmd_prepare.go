package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"scalegnn/dataset"
	"scalegnn/internal/launch"
	"scalegnn/jobfile"
	"scalegnn/permute"
	"scalegnn/prepared"
)

const prepareUsage = `usage: scalegnn prepare -in SRC -format F -out DIR [-blocks S] [-permute none|single|double -seed K]
                        [-dtype float32|bf16] [-symmetrize=true] [-force] [format options]

-dtype bf16 stores the features as bfloat16 (rounded to nearest even; half the bytes); jobs read them
widened to float32.

formats:
  planetoid  -in DIR: a Planetoid text directory (labels.txt, features.txt, edges.txt, split_*.txt; see
             dataset/planetoid/README.md)
  builtin    -in cora|citeseer: a dataset shipped in the binary
  edgelist   -in FILE: "u v [w]" lines (# comments, plain or gzip) with NumPy arrays: -features X.npy (N×F),
             -labels Y.npy (N integers, -1 unlabeled), -train/-val/-test (boolean masks or vertex ids);
             by default features.npy, labels.npy, train.npy, val.npy, test.npy beside FILE; -classes C
  ogb        -in DIR: an OGB node dataset in its raw layout (raw/edge.csv.gz, raw/node-feat.csv.gz,
             raw/node-label.csv.gz, raw/num-node-list.csv.gz, split/SCHEME/*.csv.gz); -split SCHEME
  rmat, sbm  -in "key=value,...": a generated graph with the keys of the job file's [dataset.rmat] or
             [dataset.sbm] tables plus seed, e.g. -in scale=22,edge_factor=16,seed=1 (R-MAT is streamed:
             the graph is never held in memory)
  job        -in JOB.toml: the job file's [dataset]

See docs/prepared.md for the layout and the memory bound.
`

// runPrepare writes a prepared dataset. It needs no MPI.
func runPrepare(args []string, stderr io.Writer) launch.ExitCode {
	fs := flag.NewFlagSet("scalegnn prepare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, prepareUsage) }
	in := fs.String("in", "", "source: directory, file, built-in name or generator parameters")
	format := fs.String("format", "", "planetoid, builtin, edgelist, ogb, rmat, sbm or job")
	out := fs.String("out", "", "output directory (must not exist unless -force)")
	blocks := fs.Int("blocks", 8, "split the adjacency into S×S blocks and the features into S row blocks")
	scheme := fs.String("permute", "none", "permutation: none, single or double")
	seed := fs.Int64("seed", 7, "permutation seed (the job file's permute.seed)")
	dtype := fs.String("dtype", prepared.FeaturesFloat32, "element type of the stored features: float32 or bf16")
	symmetrize := fs.Bool("symmetrize", true, "add the reverse of every edge")
	force := fs.Bool("force", false, "replace an existing prepared dataset at -out")
	quiet := fs.Bool("q", false, "no progress lines")
	features := fs.String("features", "", "edgelist: features .npy")
	labels := fs.String("labels", "", "edgelist: labels .npy")
	train := fs.String("train", "", "edgelist: train mask or ids .npy")
	val := fs.String("val", "", "edgelist: validation mask or ids .npy")
	test := fs.String("test", "", "edgelist: test mask or ids .npy")
	classes := fs.Int("classes", 0, "edgelist: number of classes (0: largest label + 1)")
	split := fs.String("split", "", "ogb: split scheme directory under split/")
	if err := fs.Parse(args); err != nil {
		return launch.ExitUsage
	}
	if *in == "" || *format == "" || *out == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "scalegnn prepare: need -in, -format and -out, and no other arguments\n%s", prepareUsage)
		return launch.ExitUsage
	}
	sch, err := permute.ParseScheme(*scheme)
	if err != nil {
		fmt.Fprintf(stderr, "scalegnn prepare: -permute %q: expected none, single or double\n", *scheme)
		return launch.ExitUsage
	}
	if _, err := prepared.ParseFeatureDType(*dtype); err != nil || *dtype == "" {
		fmt.Fprintf(stderr, "scalegnn prepare: -dtype %q: expected float32 or bf16\n", *dtype)
		return launch.ExitUsage
	}
	var input prepared.Input
	switch *format {
	case "planetoid":
		g, err := dataset.LoadPlanetoidDir(*in)
		if err != nil {
			return fail(stderr, err)
		}
		input = &prepared.GraphInput{G: g, Format: "planetoid", Path: *in}
	case "builtin":
		g, err := dataset.Builtin(*in)
		if err != nil {
			return fail(stderr, err)
		}
		input = &prepared.GraphInput{G: g, Format: "builtin", Path: *in}
	case "edgelist":
		dir := filepath.Dir(*in)
		def := func(flagVal, name string, optional bool) string {
			if flagVal != "" {
				return flagVal
			}
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); optional && err != nil {
				return ""
			}
			return p
		}
		input, err = prepared.NewEdgeListInput(prepared.EdgeListFiles{
			Edges: *in, Features: def(*features, "features.npy", false), Labels: def(*labels, "labels.npy", false),
			Train: def(*train, "train.npy", true), Val: def(*val, "val.npy", true), Test: def(*test, "test.npy", true),
			Classes: *classes,
		})
		if err != nil {
			return fail(stderr, err)
		}
	case "ogb":
		if input, err = prepared.NewOGBInput(*in, *split); err != nil {
			return fail(stderr, err)
		}
	case "rmat", "sbm", "job":
		var cfg *jobfile.Config
		if *format == "job" {
			cfg, err = jobfile.LoadConfig(*in)
		} else {
			cfg, err = generatorConfig(*format, *in)
		}
		if err != nil {
			return fail(stderr, err)
		}
		if input, err = jobInput(cfg.Dataset); err != nil {
			return fail(stderr, err)
		}
	default:
		fmt.Fprintf(stderr, "scalegnn prepare: -format %q: expected planetoid, builtin, edgelist, ogb, rmat, sbm or job\n", *format)
		return launch.ExitUsage
	}
	opt := prepared.Options{Blocks: *blocks, Scheme: sch, Seed: *seed, FeatureDType: *dtype, Symmetrize: *symmetrize, Force: *force, Progress: stderr}
	if *quiet {
		opt.Progress = nil
	}
	if _, err := prepared.Prepare(input, *out, opt); err != nil {
		return fail(stderr, err)
	}
	return launch.ExitOK
}

func fail(stderr io.Writer, err error) launch.ExitCode {
	fmt.Fprintf(stderr, "scalegnn: %v\n", err)
	return launch.ExitFailed
}

// generatorConfig turns "key=value,..." into a job's [dataset] for a
// generator, so that the keys, defaults and checks are the job file's.
func generatorConfig(gen, spec string) (*jobfile.Config, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "[dataset]\nsource = %q\n", gen)
	var table []string
	for _, kv := range strings.Split(spec, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("-in %q: expected key=value pairs separated by commas, e.g. scale=20,edge_factor=16,seed=1", spec)
		}
		line := fmt.Sprintf("%s = %s\n", strings.TrimSpace(k), strings.TrimSpace(v))
		if strings.TrimSpace(k) == "seed" {
			b.WriteString(line)
		} else {
			table = append(table, line)
		}
	}
	fmt.Fprintf(&b, "[dataset.%s]\n%s", gen, strings.Join(table, ""))
	return jobfile.ParseConfig("-in", []byte(b.String()))
}

// jobInput is the Input for a job's [dataset]: R-MAT streamed, the others
// loaded whole.
func jobInput(d jobfile.DatasetConfig) (prepared.Input, error) {
	if d.Source == jobfile.SourceRMAT {
		return &prepared.RMATInput{Cfg: d.RMATConfig()}, nil
	}
	g, err := jobfile.LoadGraph(jobfile.DatasetConfig{Source: d.Source, Path: d.Path, Seed: d.Seed, SBM: d.SBM, RMAT: d.RMAT})
	if err != nil {
		return nil, err
	}
	return &prepared.GraphInput{G: g, Format: d.Source, Path: d.Path}, nil
}
