package perfmodel

import (
	"fmt"
	"math"
)

// Sample is one measurement for a fit: the model's features and the
// measured seconds.
type Sample struct {
	X []float64
	T float64
}

// FitResult is a fitted linear model t ≈ Σ coef[i]·x[i].
type FitResult struct {
	Coef []float64
	// R2 is the coefficient of determination of the relative residuals
	// (1 − Σ(r/t)² / Σ((t−mean)/t)²) and MedianRelErr the median of
	// |prediction − t|/t over the samples.
	R2, MedianRelErr float64
}

// FitNonNegative fits t ≈ Σ coef[i]·x[i] by least squares on relative
// errors (each sample weighted by 1/t, so that fast and slow measurements
// count alike) with every coefficient >= 0: a term whose coefficient comes
// out negative is dropped and the rest refitted, until all are
// non-negative. It returns an error when there are fewer samples than
// terms or a time is not positive.
func FitNonNegative(samples []Sample) (FitResult, error) {
	if len(samples) == 0 {
		return FitResult{}, fmt.Errorf("perfmodel: no samples to fit")
	}
	k := len(samples[0].X)
	if len(samples) < k {
		return FitResult{}, fmt.Errorf("perfmodel: %d samples for %d coefficients", len(samples), k)
	}
	for _, s := range samples {
		if len(s.X) != k {
			panic(fmt.Sprintf("perfmodel: sample with %d features, want %d", len(s.X), k))
		}
		if !(s.T > 0) {
			return FitResult{}, fmt.Errorf("perfmodel: measured time %v: expected > 0", s.T)
		}
	}
	active := make([]bool, k)
	for i := range active {
		active[i] = true
	}
	for {
		coef := solveWeighted(samples, active)
		neg := -1
		for i, c := range coef {
			if active[i] && c < 0 && (neg < 0 || c < coef[neg]) {
				neg = i
			}
		}
		if neg < 0 {
			return evaluate(samples, coef), nil
		}
		active[neg] = false
	}
}

// solveWeighted solves the weighted normal equations over the active
// columns, each scaled to unit maximum for conditioning.
func solveWeighted(samples []Sample, active []bool) []float64 {
	var cols []int
	for i, a := range active {
		if a {
			cols = append(cols, i)
		}
	}
	coef := make([]float64, len(active))
	if len(cols) == 0 {
		return coef
	}
	scale := make([]float64, len(cols))
	for j, c := range cols {
		for _, s := range samples {
			scale[j] = math.Max(scale[j], math.Abs(s.X[c]/s.T))
		}
		if scale[j] == 0 {
			scale[j] = 1
		}
	}
	n := len(cols)
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
	}
	for _, s := range samples {
		row := make([]float64, n)
		for j, c := range cols {
			row[j] = s.X[c] / s.T / scale[j]
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				a[i][j] += row[i] * row[j]
			}
			a[i][n] += row[i] // target t/t = 1
		}
	}
	// A tiny ridge keeps a column that is all zero (or collinear) solvable.
	for i := 0; i < n; i++ {
		a[i][i] += 1e-12 * (1 + a[i][i])
	}
	x := gaussSolve(a)
	for j, c := range cols {
		coef[c] = x[j] / scale[j]
	}
	return coef
}

// gaussSolve solves the augmented system a (n × n+1) with partial pivoting.
func gaussSolve(a [][]float64) []float64 {
	n := len(a)
	for col := 0; col < n; col++ {
		p := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[p][col]) {
				p = r
			}
		}
		a[col], a[p] = a[p], a[col]
		if a[col][col] == 0 {
			continue
		}
		for r := col + 1; r < n; r++ {
			f := a[r][col] / a[col][col]
			for c := col; c <= n; c++ {
				a[r][c] -= f * a[col][c]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := a[r][n]
		for c := r + 1; c < n; c++ {
			s -= a[r][c] * x[c]
		}
		if a[r][r] != 0 {
			x[r] = s / a[r][r]
		}
	}
	return x
}

func evaluate(samples []Sample, coef []float64) FitResult {
	rel := make([]float64, len(samples))
	var ssr, sst, mean float64
	for _, s := range samples {
		mean += s.T
	}
	mean /= float64(len(samples))
	for i, s := range samples {
		var p float64
		for j, x := range s.X {
			p += coef[j] * x
		}
		r := (p - s.T) / s.T
		rel[i] = math.Abs(r)
		ssr += r * r
		d := (s.T - mean) / s.T
		sst += d * d
	}
	res := FitResult{Coef: coef, R2: 1, MedianRelErr: median(rel)}
	if sst > 0 {
		res.R2 = 1 - ssr/sst
	}
	return res
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}
