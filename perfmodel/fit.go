package perfmodel

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
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

// solveWeighted fits the active columns by least squares on relative
// errors (rows x/t, targets t/t = 1) with gonum's QR, each column scaled to
// unit maximum for conditioning. A tiny ridge, 1e-12·(1 + ‖column‖²) on
// the diagonal of the normal equations, keeps an all-zero or collinear
// column solvable; it enters the QR as one extra row per column.
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
	m, n := len(samples), len(cols)
	scale := make([]float64, n)
	for j, c := range cols {
		for _, s := range samples {
			scale[j] = math.Max(scale[j], math.Abs(s.X[c]/s.T))
		}
		if scale[j] == 0 {
			scale[j] = 1
		}
	}
	a := mat.NewDense(m+n, n, nil)
	b := mat.NewVecDense(m+n, nil)
	for i, s := range samples {
		for j, c := range cols {
			a.Set(i, j, s.X[c]/s.T/scale[j])
		}
		b.SetVec(i, 1)
	}
	for j := range n {
		norm := mat.Norm(a.ColView(j), 2)
		a.Set(m+j, j, math.Sqrt(1e-12*(1+norm*norm)))
	}
	var qr mat.QR
	qr.Factorize(a)
	var x mat.VecDense
	if err := qr.SolveVecTo(&x, false, b); err != nil {
		// The ridge bounds the condition number well below gonum's limit;
		// a failure here is a bug, not bad data.
		panic(fmt.Sprintf("perfmodel: least squares over %d columns: %v", n, err))
	}
	for j, c := range cols {
		coef[c] = x.AtVec(j) / scale[j]
	}
	return coef
}

func evaluate(samples []Sample, coef []float64) FitResult {
	rel := make([]float64, len(samples))
	var ssr, sst, mean float64
	for _, s := range samples {
		mean += s.T
	}
	mean /= float64(len(samples))
	for i, s := range samples {
		r := (floats.Dot(coef, s.X) - s.T) / s.T
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

// median returns the median of v (the mean of the two middle values of an
// even count), or NaN for no values. gonum's empirical quantile at 1/2 is
// the lower middle value; the one just above 1/2 is the upper.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	lo := stat.Quantile(0.5, stat.Empirical, s, nil)
	hi := stat.Quantile(math.Nextafter(0.5, 1), stat.Empirical, s, nil)
	return (lo + hi) / 2
}
