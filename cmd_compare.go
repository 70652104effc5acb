package main

import (
	"flag"
	"fmt"
	"io"
	"math"

	"scalegnn/internal/launch"
	"scalegnn/record"
)

// runCompare checks that two runs of the same job (say one rank and eight)
// trained identically: the same epochs, losses within a relative tolerance
// and the same accuracies wherever both evaluated. A run is its output
// directory or its metrics file (record.ReadRun).
func runCompare(args []string, stdout, stderr io.Writer) launch.ExitCode {
	fs := flag.NewFlagSet("scalegnn compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tol := fs.Float64("tol", 1e-4, "largest relative difference of the losses")
	accTol := fs.Float64("acc-tol", 0, "largest difference of the accuracies")
	if err := fs.Parse(args); err != nil {
		return launch.ExitUsage
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(stderr, "usage: scalegnn compare [-tol 1e-4] [-acc-tol 0] RUN_A RUN_B  (run directories or their metrics files)")
		return launch.ExitUsage
	}
	a, err := record.ReadRun(fs.Arg(0))
	if err == nil {
		var b *record.Run
		if b, err = record.ReadRun(fs.Arg(1)); err == nil {
			// A run killed before it could write its status is compared
			// as far as it got, and said to have ended abnormally.
			for _, r := range []*record.Run{a, b} {
				if msg := record.EndedAbnormally(r.Dir, r.Summary); msg != "" {
					fmt.Fprintf(stderr, "scalegnn compare: %s\n", msg)
				}
			}
			err = compareMetrics(stdout, a.Metrics, b.Metrics, *tol, *accTol)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "scalegnn compare: %v\n", err)
		return launch.ExitFailed
	}
	return launch.ExitOK
}

func compareMetrics(w io.Writer, a, b []record.EpochMetrics, tol, accTol float64) error {
	if len(a) != len(b) || len(a) == 0 {
		return fmt.Errorf("%d epochs against %d", len(a), len(b))
	}
	worstLoss, worstAcc, evals := 0.0, 0.0, 0
	for i := range a {
		if a[i].Epoch != b[i].Epoch {
			return fmt.Errorf("line %d: epoch %d against %d", i+1, a[i].Epoch, b[i].Epoch)
		}
		d := math.Abs(a[i].Loss-b[i].Loss) / math.Max(1, math.Abs(a[i].Loss))
		if !(d <= tol) {
			return fmt.Errorf("epoch %d: loss %.9g against %.9g (relative difference %.3g > %g)", a[i].Epoch, a[i].Loss, b[i].Loss, d, tol)
		}
		worstLoss = math.Max(worstLoss, d)
		pairs := [][2]*float64{{a[i].TrainAcc, b[i].TrainAcc}, {a[i].ValAcc, b[i].ValAcc}, {a[i].TestAcc, b[i].TestAcc}}
		for k, p := range pairs {
			if p[0] == nil || p[1] == nil {
				continue
			}
			if k == 0 {
				evals++
			}
			d := math.Abs(*p[0] - *p[1])
			if d > accTol {
				return fmt.Errorf("epoch %d: %s accuracy %.4f against %.4f", a[i].Epoch, [3]string{"train", "val", "test"}[k], *p[0], *p[1])
			}
			worstAcc = math.Max(worstAcc, d)
		}
	}
	fmt.Fprintf(w, "same training: %d epochs, largest relative loss difference %.3g, %d evaluations, largest accuracy difference %.4f\n",
		len(a), worstLoss, evals, worstAcc)
	return nil
}
