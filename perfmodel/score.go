package perfmodel

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
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
	// The ranks are exact (whole or half numbers), so a constant series has
	// a variance of exactly 0 and gonum's Pearson correlation is 0/0 = NaN.
	return stat.Correlation(ranks(a), ranks(b), nil)
}

// ranks returns the rank of each value of v, from 1, with tied values
// sharing the average of their ranks.
func ranks(v []float64) []float64 {
	sorted := append([]float64(nil), v...)
	idx := make([]int, len(v))
	floats.Argsort(sorted, idx)
	r := make([]float64, len(v))
	for i := 0; i < len(sorted); {
		j := i
		for j+1 < len(sorted) && sorted[j+1] == sorted[i] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for _, k := range idx[i : j+1] {
			r[k] = avg
		}
		i = j + 1
	}
	return r
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
