package perfmodel

import (
	"math"
	"testing"
)

func TestSpearman(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{[]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{[]float64{1, 2, 3, 4, 5}, []float64{2, 1, 4, 3, 5}, 0.8},
		// Ties take the average rank: ranks (1.5, 1.5, 3) and (1, 2, 3).
		{[]float64{1, 1, 2}, []float64{1, 2, 3}, math.Sqrt(3) / 2},
		// Three-way tie, out of order: ranks (4, 1, 4, 2, 4) both times.
		{[]float64{3, 1, 3, 2, 3}, []float64{5, 1, 5, 2, 5}, 1},
	} {
		if got := Spearman(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Spearman(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if got := Spearman([]float64{1, 1}, []float64{1, 2}); !math.IsNaN(got) {
		t.Errorf("constant series: %v, want NaN", got)
	}
}

func TestScoreGap(t *testing.T) {
	s := ScoreOf([]string{"a", "b", "c"}, []float64{1, 2, 3}, []float64{1.2, 1.0, 3})
	if s.PredictedBest != "a" || s.MeasuredBest != "b" || math.Abs(s.Gap-0.2) > 1e-12 {
		t.Errorf("%+v, want predicted a, measured b, gap 0.2", s)
	}
}
