package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/internal/launch"
	"scalegnn/internal/node"
	"scalegnn/jobfile"
	"scalegnn/jobs"
	"scalegnn/method"
	"scalegnn/perfmodel"
	"scalegnn/plan"
	"scalegnn/record"
)

const perfmodelUsage = `usage:
  scalegnn perfmodel predict -config job.toml -ranks G [-ranks-per-node K] [-mem-per-rank 40GiB]
                             [-machine machine.toml] [-d D] [-top 10] [-json] [-plot out.png]
                             [-n N -nnz NNZ] [-imbalance 1.1]
      predicted epoch time and memory per rank of every algorithm and grid of G ranks, best first
      (a full-graph job lists 3D grids and 1.5D arrangements unless train.algorithm names one)
  scalegnn perfmodel calibrate -out machine.toml [-name NAME] [-quick] [-device cpu|native|cuda] [-disk-dir DIR]
      measure SpMM, GEMM and collectives on this machine and fit the model's coefficients
      (launch with mpirun/srun exactly as training will be launched; -device as runtime.device,
      a GPU per rank bound as in training; the profile records the device)
  scalegnn perfmodel score -config job.toml -ranks G [-machine m.toml] [-skip-epochs 1] [-median] [-json] [-plot out.png] runs/*/summary.json
      compare predicted with measured epoch times: Spearman rank correlation and the
      gap between the predicted-best grid's measured time and the measured best; each run
      matches the prediction of its summary's algorithm, grid and replication
`

func runPerfmodel(args []string, stdout, stderr io.Writer) launch.ExitCode {
	if len(args) == 0 {
		fmt.Fprint(stderr, perfmodelUsage)
		return launch.ExitUsage
	}
	switch args[0] {
	case "predict":
		return runPredict(args[1:], stdout, stderr)
	case "score":
		return runScore(args[1:], stdout, stderr)
	case "calibrate":
		return runCalibrate(args[1:], stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, perfmodelUsage)
		return launch.ExitOK
	}
	fmt.Fprintf(stderr, "scalegnn perfmodel: unknown command %q\n%s", args[0], perfmodelUsage)
	return launch.ExitUsage
}

// predictFlags are the flags predict and score share.
type predictFlags struct {
	config, machine, mem string
	ranks, perNode, d    int
	n                    int
	nnz                  int64
	imbalance            float64
	jsonOut              bool
	plot                 string
}

func (p *predictFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.config, "config", "", "job file (TOML)")
	fs.IntVar(&p.ranks, "ranks", 0, "number of ranks G")
	fs.IntVar(&p.perNode, "ranks-per-node", 0, "ranks per node (default: the machine profile's, else all on one node)")
	fs.StringVar(&p.mem, "mem-per-rank", "", "memory per rank, e.g. 40GiB (default: the job's grid.mem_per_rank, else no limit)")
	fs.StringVar(&p.machine, "machine", "", "machine profile (file, or a built-in name: "+strings.Join(perfmodel.Profiles(), ", ")+"); default: the job's grid.machine, else built-in defaults")
	fs.IntVar(&p.d, "d", 0, "fix Gd, the data-parallel replicas (mini-batch); 0: any divisor")
	fs.IntVar(&p.n, "n", 0, "override the graph's vertex count")
	fs.Int64Var(&p.nnz, "nnz", 0, "override the graph's nonzeros (normalised adjacency, self loops included)")
	fs.Float64Var(&p.imbalance, "imbalance", 0, "max/mean nonzeros over adjacency blocks (scalegnn balance); default 1")
	fs.BoolVar(&p.jsonOut, "json", false, "write JSON instead of a table")
	fs.StringVar(&p.plot, "plot", "", "also draw the predicted time per grid to this image (.png, .svg, .pdf)")
}

// predictSetup loads the job, the graph size and the machine, and predicts.
type predicted struct {
	cfg     *jobfile.Config
	gs      plan.GraphSize
	job     perfmodel.Job
	machine *perfmodel.Machine
	mem     int64
	memFrom string // where mem came from ("": no limit)
	preds   []perfmodel.Prediction
	choices perfmodel.Choices
}

func (p *predictFlags) run() (*predicted, error) {
	if p.config == "" {
		return nil, fmt.Errorf("need -config job.toml")
	}
	if p.ranks < 1 {
		return nil, fmt.Errorf("-ranks %d: expected the number of ranks, an integer >= 1", p.ranks)
	}
	out := &predicted{}
	var err error
	if p.mem != "" {
		if out.mem, err = perfmodel.ParseBytes(p.mem); err != nil {
			return nil, fmt.Errorf("-mem-per-rank %v", err)
		}
	}
	if out.cfg, err = jobfile.LoadConfig(p.config); err != nil {
		return nil, err
	}
	// Without the flags, the job's own limit (plan.MemoryLimit, before
	// submission: no machine's limits) and profile, as its memory check
	// and grid.auto use them.
	if p.mem != "" {
		out.memFrom = "-mem-per-rank"
	} else if limit, from, ok, err := plan.MemoryLimit(out.cfg, 1, nil); err != nil {
		return nil, err
	} else if ok {
		out.mem, out.memFrom = limit, from
	}
	machine := p.machine
	if machine == "" {
		machine = out.cfg.Grid.Machine
	}
	out.machine = perfmodel.DefaultMachine()
	if machine != "" {
		if out.machine, err = perfmodel.LoadMachine(machine); err != nil {
			return nil, err
		}
	}
	if p.n > 0 && p.nnz > 0 {
		out.gs = plan.GraphSize{N: p.n, NNZ: p.nnz, How: "-n and -nnz"}
		// Widths still come from the job's dataset description.
		if gs, err := plan.EstimateGraphSize(out.cfg.Dataset); err == nil {
			out.gs.Features, out.gs.Classes = gs.Features, gs.Classes
		} else {
			return nil, err
		}
	} else if p.n > 0 || p.nnz > 0 {
		return nil, fmt.Errorf("-n and -nnz go together")
	} else if out.gs, err = plan.EstimateGraphSize(out.cfg.Dataset); err != nil {
		return nil, err
	}
	out.job = plan.PerfJob(out.cfg, out.gs)
	out.job.Imbalance = p.imbalance
	out.choices = plan.PerfChoices(out.cfg)
	out.preds, err = perfmodel.PredictAll(out.job, out.machine, perfmodel.Options{Ranks: p.ranks, RanksPerNode: p.perNode, MemPerRank: out.mem, D: p.d}, out.choices)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func runPredict(args []string, stdout, stderr io.Writer) launch.ExitCode {
	fs := flag.NewFlagSet("scalegnn perfmodel predict", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, perfmodelUsage) }
	var pf predictFlags
	pf.register(fs)
	top := fs.Int("top", 10, "rows of the table (0: all)")
	if err := fs.Parse(args); err != nil {
		return launch.ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "scalegnn perfmodel predict: unexpected argument %q\n", fs.Arg(0))
		return launch.ExitUsage
	}
	r, err := pf.run()
	if err != nil {
		fmt.Fprintf(stderr, "scalegnn perfmodel predict: %v\n", err)
		return launch.ExitFailed
	}
	// The recommendation stays within what trains the job as written
	// (plan.OwnChoices); another mode's faster row is named beside it.
	own := plan.OwnChoices(r.cfg)
	best, bestErr := perfmodel.Best(ownPredictions(r.preds, own), r.mem)
	other, otherErr := perfmodel.Best(r.preds, r.mem)
	otherFaster := bestErr == nil && otherErr == nil && !own.Has(other.Algorithm) && other.Epoch < best.Epoch
	// How much larger a graph the recommendation holds, in each precision
	// (cmd_perfmodel_capacity.go).
	capErr := bestErr
	var capa capacity
	if capErr == nil {
		capa, capErr = capacityOf(r, &pf, best)
	}
	if pf.plot != "" {
		title := fmt.Sprintf("%s on %d ranks (%s)", r.cfg.Path, pf.ranks, r.machine.Name)
		if err := perfmodel.PlotPredictions(pf.plot, title, r.preds, nil); err != nil {
			fmt.Fprintf(stderr, "scalegnn perfmodel predict: %v\n", err)
			return launch.ExitFailed
		}
	}
	if pf.jsonOut {
		doc := map[string]any{"config": r.cfg.Path, "ranks": pf.ranks, "machine": r.machine.Name,
			"graph": r.gs, "mode": r.job.Mode.String(), "precision": r.job.Precision.String(), "predictions": r.preds}
		if note := precisionNote(r.job, r.machine); note != "" {
			doc["note"] = note
		}
		if bestErr == nil {
			doc["recommended"] = best
			if capErr == nil {
				doc["capacity"] = capa
			}
			if otherFaster {
				doc["fastest_other_mode"] = other
			}
		} else {
			doc["error"] = bestErr.Error()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(doc)
	} else {
		layers := fmt.Sprintf("%d %v layers, hidden %d", r.job.Layers, r.job.Layer, r.job.Hidden)
		if r.job.Layer == gcn.GATLayer {
			layers = fmt.Sprintf("%d gat layers, %d heads (last: %d) of %d", r.job.Layers, max(r.job.Heads, 1), max(r.job.OutputHeads, 1), r.job.Hidden)
		}
		fmt.Fprintf(stdout, "job %s: N=%d, nnz=%d (%s), %s, %s, %s communication\n",
			r.cfg.Path, r.gs.N, r.gs.NNZ, r.gs.How, layers, r.job.Mode, r.job.CommDType)
		limit := ""
		if r.memFrom != "" {
			limit = fmt.Sprintf(", at most %s per rank (%s)", perfmodel.FormatBytes(r.mem), r.memFrom)
		}
		fmt.Fprintf(stdout, "%d ranks, machine %s%s; %d grids of %s\n", pf.ranks, r.machine.Name, limit, len(r.preds), choicesText(r.choices))
		if note := precisionNote(r.job, r.machine); note != "" {
			fmt.Fprintf(stdout, "note: %s\n", note)
		}
		fmt.Fprintln(stdout)
		writeTable(stdout, r.preds, *top, nil)
		if bestErr == nil {
			fmt.Fprintf(stdout, "\nrecommended grid: %s (%s, predicted %.4g s per epoch, %s per rank)\n", best.Grid, best.Algorithm, best.Epoch, perfmodel.FormatBytes(best.MemTotal))
			if capErr == nil {
				writeCapacity(stdout, capa)
			}
			if otherFaster {
				fmt.Fprintf(stdout, "faster in another training mode: %s (%s, predicted %.4g s per epoch, %.2fx); it samples or partitions differently, so set train.mode = %q and check its accuracy before switching\n",
					other.Grid, other.Algorithm, other.Epoch, best.Epoch/other.Epoch, method.Batch(other.Algorithm).Mode().String())
			}
		}
	}
	if bestErr != nil {
		fmt.Fprintf(stderr, "scalegnn perfmodel predict: %s: %v\n", r.cfg.Path, bestErr)
		return launch.ExitFailed
	}
	return launch.ExitOK
}

// precisionNote says how a mixed-precision job's products are priced
// when machine m cannot price them as such ("" otherwise).
func precisionNote(j perfmodel.Job, m *perfmodel.Machine) string {
	if j.Precision != device.BF16 || m.HasBF16() {
		return ""
	}
	return fmt.Sprintf("train.precision = \"bf16\", but machine %s has no bf16 costs: its SpMMs and GEMMs are priced as float32 (a profile from scalegnn perfmodel calibrate has them)", m.Name)
}

// writeTable prints the predictions; measured, when not nil, adds a column.
func writeTable(w io.Writer, preds []perfmodel.Prediction, top int, measured []float64) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// A disk column only where a prediction reads from disk (out-of-core
	// isolated training), so that other tables keep their columns.
	disk := false
	for _, p := range preds {
		disk = disk || p.Disk > 0
	}
	head := "rank\talgorithm\tgrid\tepoch_s\tcomm_s\tspmm_s\tgemm_s\tother_s\t"
	if disk {
		head += "disk_s\t"
	}
	head += "comm/rank\tmemory/rank\tfits\t"
	if measured != nil {
		head += "measured_s\t"
	}
	fmt.Fprintln(tw, head)
	for i, p := range preds {
		if top > 0 && i >= top {
			break
		}
		fits := "yes"
		if !p.Fits {
			fits = "no"
		}
		line := fmt.Sprintf("%d\t%s\t%s\t%.4g\t%.3g\t%.3g\t%.3g\t%.3g\t", i+1, p.Algorithm, p.Grid, p.Epoch, p.Comm, p.SpMM, p.GEMM, p.Other)
		if disk {
			line += fmt.Sprintf("%.3g\t", p.Disk)
		}
		line += fmt.Sprintf("%s\t%s\t%s\t", perfmodel.FormatBytes(p.CommBytes), perfmodel.FormatBytes(p.MemTotal), fits)
		if measured != nil {
			if measured[i] == measured[i] {
				line += fmt.Sprintf("%.4g\t", measured[i])
			} else {
				line += "-\t"
			}
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if top > 0 && len(preds) > top {
		fmt.Fprintf(w, "(%d more; -top 0 lists all)\n", len(preds)-top)
	}
}

// measuredRun is one training run read back for scoring.
type measuredRun struct {
	dir   string
	key   configKey
	epoch float64 // mean epoch time after the first epoch
}

// configKey identifies a configuration: the algorithm and its shape (a 3D
// grid, or perfmodel.CAGNETShape's P/c × c).
type configKey struct {
	algorithm method.Algorithm
	shape     grid.Shape
}

func keyOf(p perfmodel.Prediction) configKey { return configKey{p.Algorithm, p.Shape} }

// runKey is the configuration a run's summary records. A summary without
// an algorithm was written before 1.5D existed: its mode's algorithm.
func runKey(run *record.Run) configKey {
	s := run.Summary
	alg := method.Algorithm(s.Algorithm)
	if alg == "" {
		switch a := method.Algorithm(s.Mode); a {
		case method.NeighborSampling, method.IsolatedPartitions:
			alg = a
		default:
			alg = method.Plexus
		}
	}
	if alg == method.CAGNET {
		// d replicas (a mini-batch run's grid.d) of P/c × c.
		d := max(run.Grid.D, 1)
		return configKey{alg, perfmodel.CAGNETBatchShape(d, run.Grid.Ranks()/d, max(s.Replication, 1))}
	}
	return configKey{alg, run.Grid}
}

// choicesText names the algorithms a prediction lists, in
// method.Algorithms' order.
func choicesText(c perfmodel.Choices) string {
	var names []string
	for _, a := range method.Algorithms {
		if c[a] {
			names = append(names, string(a))
		}
	}
	return strings.Join(names, ", ")
}

// readMeasured reads a finished run (its directory or summary.json, see
// record.ReadRun): its configuration and the mean (or, with median, the
// median) epoch_s over the epochs after the first skip (which also pay for
// warm-up); the last epoch alone counts if there are no more.
func readMeasured(path string, skip int, median bool) (measuredRun, error) {
	run, err := record.ReadRun(path)
	if err != nil {
		return measuredRun{}, err
	}
	if run.Summary == nil || run.Summary.Status != record.StatusCompleted {
		return measuredRun{}, fmt.Errorf("%s: the run did not complete (summary.json missing or not \"completed\")", run.Dir)
	}
	times := run.Metrics
	times = times[min(skip, len(times)-1):]
	r := measuredRun{dir: run.Dir, key: runKey(run)}
	if median {
		secs := make([]float64, len(times))
		for i, m := range times {
			secs[i] = m.EpochSec
		}
		sort.Float64s(secs)
		r.epoch = (secs[(len(secs)-1)/2] + secs[len(secs)/2]) / 2
		return r, nil
	}
	for _, m := range times {
		r.epoch += m.EpochSec / float64(len(times))
	}
	return r, nil
}

func runScore(args []string, stdout, stderr io.Writer) launch.ExitCode {
	fs := flag.NewFlagSet("scalegnn perfmodel score", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, perfmodelUsage) }
	var pf predictFlags
	pf.register(fs)
	skip := fs.Int("skip-epochs", 1, "leave out each run's first epochs (warm-up) from its mean epoch time")
	median := fs.Bool("median", false, "take the median of the remaining epochs instead of the mean (robust to a loaded machine's bursts)")
	if err := fs.Parse(args); err != nil {
		return launch.ExitUsage
	}
	if *skip < 0 {
		fmt.Fprintf(stderr, "scalegnn perfmodel score: -skip-epochs %d: expected an integer >= 0\n", *skip)
		return launch.ExitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "scalegnn perfmodel score: name the run directories (or their summary.json) to compare\n")
		return launch.ExitUsage
	}
	fail := func(err error) launch.ExitCode {
		fmt.Fprintf(stderr, "scalegnn perfmodel score: %v\n", err)
		return launch.ExitFailed
	}
	r, err := pf.run()
	if err != nil {
		return fail(err)
	}
	measured := map[configKey]measuredRun{}
	for _, a := range fs.Args() {
		run, err := readMeasured(a, *skip, *median)
		if err != nil {
			return fail(err)
		}
		if old, ok := measured[run.key]; ok {
			return fail(fmt.Errorf("%s and %s: both ran %s %s; score one run per configuration", old.dir, run.dir, run.key.algorithm, perfmodel.GridString(run.key.shape)))
		}
		measured[run.key] = run
	}
	var names []string
	var pred, meas []float64
	var preds []perfmodel.Prediction
	var column []float64
	for _, p := range r.preds {
		run, ok := measured[keyOf(p)]
		if !ok {
			continue
		}
		delete(measured, keyOf(p))
		names, pred, meas = append(names, p.Grid), append(pred, p.Epoch), append(meas, run.epoch)
		preds, column = append(preds, p), append(column, run.epoch)
	}
	for k, run := range measured {
		return fail(fmt.Errorf("%s: %s grid %v is not among the predictions for %d ranks of %s (check -ranks and the job's train.algorithm)",
			run.dir, k.algorithm, k.shape, pf.ranks, choicesText(r.choices)))
	}
	sc := perfmodel.ScoreOf(names, pred, meas)
	if pf.plot != "" {
		title := fmt.Sprintf("%s on %d ranks: predicted (bars) and measured (points)", r.cfg.Path, pf.ranks)
		if err := perfmodel.PlotPredictions(pf.plot, title, preds, column); err != nil {
			return fail(err)
		}
	}
	if pf.jsonOut {
		rows := make([]map[string]any, len(names))
		for i := range names {
			rows[i] = map[string]any{"algorithm": preds[i].Algorithm, "grid": names[i], "predicted_s": pred[i], "measured_s": meas[i]}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"config": r.cfg.Path, "ranks": pf.ranks, "machine": r.machine.Name, "grids": rows, "score": sc}); err != nil {
			return fail(fmt.Errorf("writing JSON (a score needs at least two runs): %v", err))
		}
		return launch.ExitOK
	}
	writeTable(stdout, preds, 0, column)
	fmt.Fprintf(stdout, "\nSpearman rank correlation %.3f over %d grids; predicted best %s, measured best %s; "+
		"the predicted best measured %.1f%% slower than the measured best\n", sc.Spearman, len(names), sc.PredictedBest, sc.MeasuredBest, 100*sc.Gap)
	return launch.ExitOK
}

func runCalibrate(args []string, stderr io.Writer) launch.ExitCode {
	fs := flag.NewFlagSet("scalegnn perfmodel calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, perfmodelUsage) }
	out := fs.String("out", "", "write the machine profile (TOML) here")
	name := fs.String("name", "", "profile name (default: the file name without .toml)")
	quick := fs.Bool("quick", false, "fewer shapes and repetitions (a few seconds)")
	threads := fs.Int("threads", 0, "kernel threads per rank; 0: as training does (cores / ranks on the node)")
	verbose := fs.Bool("v", false, "print every measurement")
	dev := fs.String("device", jobfile.DeviceCPU, "the device to measure, as runtime.device: cpu (the fastest host device of this build), native or cuda")
	diskDir := fs.String("disk-dir", "", "measure the cold read bandwidth here (the prepared datasets' file system; default the temporary directory)")
	if err := fs.Parse(args); err != nil {
		return launch.ExitUsage
	}
	if *dev != jobfile.DeviceCPU && *dev != jobfile.DeviceNative && *dev != jobfile.DeviceCUDA {
		fmt.Fprintf(stderr, "scalegnn perfmodel calibrate: -device %q: expected cpu, native or cuda\n", *dev)
		return launch.ExitUsage
	}
	if *out == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "scalegnn perfmodel calibrate: need -out machine.toml and no other arguments\n")
		return launch.ExitUsage
	}
	if *threads < 0 {
		fmt.Fprintf(stderr, "scalegnn perfmodel calibrate: -threads %d: expected an integer >= 0\n", *threads)
		return launch.ExitUsage
	}
	if *name == "" {
		*name = strings.TrimSuffix(filepath.Base(*out), ".toml")
	}
	return launch.WithMPI(stderr, func(world collectives.Comm, agree func(error) error) error {
		info, err := node.Detect(world)
		if err := agree(err); err != nil {
			return err
		}
		th := launch.RankThreads(*threads, info)
		logw := io.Discard
		if world.Rank() == 0 && *verbose {
			logw = stderr
		}
		rd, err := launch.OpenDevice(launch.DeviceRequest{What: "-device " + *dev, Name: *dev, Threads: th}, world.Rank(), info, jobs.NewLogger(world.Rank(), *verbose, false))
		if err := agree(err); err != nil {
			return err
		}
		m, err := perfmodel.Calibrate(world, rd.Dev, perfmodel.CalibrateOptions{Threads: th, Quick: *quick, Log: logw, Name: *name, DiskDir: *diskDir})
		if err == nil && world.Rank() == 0 {
			header := "machine profile for scalegnn perfmodel predict -machine; written by\n" +
				fmt.Sprintf("scalegnn perfmodel calibrate (%d ranks). Times in seconds, bandwidths in GB/s.", world.Size())
			err = m.WriteFile(*out, header)
		}
		if err := agree(err); err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Fprintf(stderr, "wrote %s: %s\n", *out, m.Description)
			for _, k := range []string{"spmm_median_rel_err", "gemm_nn_median_rel_err", "gemm_tn_median_rel_err", "gemm_nt_median_rel_err", "comm_intra_median_rel_err", "comm_inter_median_rel_err", "comm_bcast_median_rel_err"} {
				if v, ok := m.Fit[k]; ok {
					fmt.Fprintf(stderr, "  %s = %.3f\n", k, v)
				}
			}
		}
		return nil
	})
}

// ownPredictions keeps the predictions of the algorithms own lists.
func ownPredictions(preds []perfmodel.Prediction, own perfmodel.Choices) []perfmodel.Prediction {
	var out []perfmodel.Prediction
	for _, p := range preds {
		if own.Has(p.Algorithm) {
			out = append(out, p)
		}
	}
	return out
}
