package perfmodel

import (
	"fmt"
	"math"
	"sort"
)

// Spearman returns the Spearman rank correlation of a and b (ties get
// their average rank), or NaN when fewer than two pairs or a constant
// series leave it undefined. It panics when the lengths differ.
func Spearman(a, b []float64) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("perfmodel: Spearman of %d and %d values", len(a), len(b)))
	}
	if len(a) < 2 {
		return math.NaN()
	}
	return pearson(ranks(a), ranks(b))
}

func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return v[idx[x]] < v[idx[y]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// Score compares predicted and measured epoch times of the same grids.
type Score struct {
	// Spearman is the rank correlation of predicted and measured times.
	Spearman float64 `json:"spearman"`
	// PredictedBest is the grid predicted fastest (among the measured
	// ones), MeasuredBest the grid measured fastest.
	PredictedBest string `json:"predicted_best"`
	MeasuredBest  string `json:"measured_best"`
	// Gap is how much slower the predicted-best grid measured than the
	// measured best: measured(PredictedBest)/measured(MeasuredBest) − 1.
	Gap float64 `json:"gap"`
}

// ScoreOf scores the grids named by names with predicted and measured
// epoch times.
func ScoreOf(names []string, predicted, measured []float64) Score {
	s := Score{Spearman: Spearman(predicted, measured)}
	bp, bm := 0, 0
	for i := range names {
		if predicted[i] < predicted[bp] {
			bp = i
		}
		if measured[i] < measured[bm] {
			bm = i
		}
	}
	if len(names) > 0 {
		s.PredictedBest, s.MeasuredBest = names[bp], names[bm]
		s.Gap = measured[bp]/measured[bm] - 1
	}
	return s
}
