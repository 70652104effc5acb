package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"scalegnn/internal/launch"
	"scalegnn/record"
)

const plotUsage = `usage: scalegnn plot RUN_DIR... [-o curves.png]
  draws the training loss, the validation (solid) and test (dashed) accuracy
  and the time per epoch of one or more runs (output directories, or their
  metrics files) side by side; -o's extension picks the format (.png, .svg, .pdf)
`

// runPlot is scalegnn plot RUN_DIR... -o curves.png. Flags may come before
// or after the runs.
func runPlot(args []string, stdout, stderr io.Writer) launch.ExitCode {
	fs := flag.NewFlagSet("scalegnn plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, plotUsage) }
	out := fs.String("o", "curves.png", "image to write (.png, .svg or .pdf)")
	var paths []string
	for {
		if err := fs.Parse(args); err != nil {
			return launch.ExitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		paths = append(paths, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(paths) == 0 {
		fmt.Fprintf(stderr, "scalegnn plot: name at least one run directory\n%s", plotUsage)
		return launch.ExitUsage
	}
	runs := make([]*record.Run, len(paths))
	for i, p := range paths {
		r, err := record.ReadRun(p)
		if err != nil {
			fmt.Fprintf(stderr, "scalegnn plot: %v\n", err)
			return launch.ExitFailed
		}
		runs[i] = r
	}
	if err := plotRuns(*out, runs); err != nil {
		fmt.Fprintf(stderr, "scalegnn plot: %v\n", err)
		return launch.ExitFailed
	}
	fmt.Fprintf(stdout, "wrote %s (%d runs)\n", *out, len(runs))
	return launch.ExitOK
}

// runLabel names a run in the legends: its directory, shortened to the
// last two path elements.
func runLabel(r *record.Run) string {
	d := filepath.Clean(r.Dir)
	parts := strings.Split(filepath.ToSlash(d), "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, "/")
}

// plotRuns draws three panels — loss, accuracy, epoch time against the
// epoch — one color per run, and writes them to path.
func plotRuns(path string, runs []*record.Run) error {
	panels := [3]*plot.Plot{plot.New(), plot.New(), plot.New()}
	for i, title := range []string{"training loss", "accuracy (validation solid, test dashed)", "time per epoch"} {
		panels[i].Title.Text = title
		panels[i].X.Label.Text = "epoch"
		panels[i].Legend.Top = true
	}
	panels[1].Y.Label.Text = "accuracy"
	panels[1].Legend.Top = false // accuracy rises to the top right
	panels[1].Legend.Left = false
	// Log scale: the first epoch (warm-up) and evaluations would flatten
	// the steady epochs on a linear one.
	panels[2].Y.Label.Text = "ms (log scale)"
	panels[2].Y.Scale = plot.LogScale{}
	panels[2].Y.Tick.Marker = plot.DefaultTicks{}
	for k, r := range runs {
		var loss, val, test, ms plotter.XYs
		for _, m := range r.Metrics {
			e := float64(m.Epoch)
			loss = appendFinite(loss, e, m.Loss)
			ms = appendFinite(ms, e, 1e3*m.EpochSec)
			if m.ValAcc != nil && m.TestAcc != nil {
				val = appendFinite(val, e, *m.ValAcc)
				test = appendFinite(test, e, *m.TestAcc)
			}
		}
		label := runLabel(r)
		for _, s := range []struct {
			panel  int
			pts    plotter.XYs
			dashed bool
			legend bool
		}{{0, loss, false, true}, {1, val, false, true}, {1, test, true, false}, {2, ms, false, true}} {
			if len(s.pts) == 0 {
				continue
			}
			l, err := plotter.NewLine(s.pts)
			if err != nil {
				return fmt.Errorf("%s: %w", r.Dir, err)
			}
			l.Color = plotutil.Color(k)
			l.Width = vg.Points(1.2)
			if s.dashed {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			panels[s.panel].Add(l)
			if s.legend {
				panels[s.panel].Legend.Add(label, l)
			}
		}
	}
	const w, h = 15 * vg.Inch, 4.5 * vg.Inch
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return fmt.Errorf("-o %s: %v (expected .png, .svg or .pdf)", path, err)
	}
	tiles := draw.Tiles{Rows: 1, Cols: 3, PadX: vg.Points(12), PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12)}
	canvases := plot.Align([][]*plot.Plot{panels[:]}, tiles, draw.New(c))
	for i, p := range panels {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing plot: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing plot %s: %w", path, err)
	}
	return f.Close()
}

// appendFinite adds (x, y) unless y is NaN or ±Inf (a diverged epoch),
// which a line cannot draw.
func appendFinite(pts plotter.XYs, x, y float64) plotter.XYs {
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return pts
	}
	return append(pts, plotter.XY{X: x, Y: y})
}
