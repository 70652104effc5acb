package perfmodel

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// PlotPredictions draws the predicted epoch time of each grid, in the
// order given, as bars stacked by communication, SpMM, GEMM and other
// time, and writes the image to path (its extension picks the format:
// .png, .svg, .pdf). Grids that do not fit in memory are marked with *.
// measured, when not nil, adds the measured epoch time per grid (NaN for
// none) as points.
func PlotPredictions(path, title string, preds []Prediction, measured []float64) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "seconds per epoch"
	names := make([]string, len(preds))
	parts := [4]plotter.Values{}
	for i, pr := range preds {
		names[i] = pr.Grid
		if !pr.Fits {
			names[i] += "*"
		}
		for k, v := range []float64{pr.Comm, pr.SpMM, pr.GEMM, pr.Other} {
			parts[k] = append(parts[k], v)
		}
	}
	w := vg.Points(max(4, min(20, 400/float64(max(1, len(preds))))))
	labels := []string{"communication", "SpMM", "GEMM", "other"}
	var below *plotter.BarChart
	for k := range parts {
		b, err := plotter.NewBarChart(parts[k], w)
		if err != nil {
			return err
		}
		b.Color = plotutil.Color(k)
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(labels[k], b)
	}
	if measured != nil {
		var pts plotter.XYs
		for i, v := range measured {
			if i < len(preds) && v == v {
				pts = append(pts, plotter.XY{X: float64(i), Y: v})
			}
		}
		if len(pts) > 0 {
			s, err := plotter.NewScatter(pts)
			if err != nil {
				return err
			}
			s.GlyphStyle.Color = color.Black
			s.GlyphStyle.Radius = vg.Points(3)
			p.Add(s)
			p.Legend.Add("measured", s)
		}
	}
	p.Legend.Top = true
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.8
	p.X.Tick.Label.XAlign = -0.8
	width := vg.Length(max(6, 0.35*float64(len(preds)))) * vg.Inch
	if err := p.Save(width, 4*vg.Inch, path); err != nil {
		return fmt.Errorf("writing plot %s: %w", path, err)
	}
	return nil
}
