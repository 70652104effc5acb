package perfmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFitRecoversCoefficients fits noiseless and 2%-noisy data generated
// from known non-negative coefficients, one of them zero.
func TestFitRecoversCoefficients(t *testing.T) {
	want := []float64{5e-4, 1e-9, 0, 2.5e-10}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, noise := range []float64{0, 0.02} {
		var samples []Sample
		for i := 0; i < 60; i++ {
			x := []float64{1, float64(rng.IntN(1e6) + 1e3), float64(rng.IntN(1e5)), float64(rng.IntN(1e7) + 1e4)}
			var tt float64
			for j := range x {
				tt += want[j] * x[j]
			}
			samples = append(samples, Sample{X: x, T: tt * (1 + noise*rng.NormFloat64())})
		}
		got, err := FitNonNegative(samples)
		if err != nil {
			t.Fatal(err)
		}
		tol := 1e-6 + 5*noise // relative, on the coefficients that matter
		for j, w := range want {
			if w == 0 {
				if got.Coef[j] < 0 {
					t.Errorf("noise %v: coef %d = %v < 0", noise, j, got.Coef[j])
				}
				continue
			}
			if math.Abs(got.Coef[j]-w) > tol*w {
				t.Errorf("noise %v: coef %d = %v, want %v ± %.0f%%", noise, j, got.Coef[j], w, 100*tol)
			}
		}
		if noise == 0 && got.MedianRelErr > 1e-6 {
			t.Errorf("noiseless fit: median relative error %v", got.MedianRelErr)
		}
	}
}

// TestFitDropsNegativeTerms: data that a negative coefficient would fit
// best gets a non-negative fit instead.
func TestFitDropsNegativeTerms(t *testing.T) {
	var samples []Sample
	for i := 1; i <= 20; i++ {
		x := float64(i)
		samples = append(samples, Sample{X: []float64{1, x}, T: 10 - 0.4*x})
	}
	got, err := FitNonNegative(samples)
	if err != nil {
		t.Fatal(err)
	}
	if got.Coef[0] < 0 || got.Coef[1] < 0 {
		t.Errorf("coefficients %v: want all >= 0", got.Coef)
	}
	if _, err := FitNonNegative(samples[:1]); err == nil {
		t.Error("one sample for two coefficients: no error")
	}
}

// TestFitDegenerateColumns: an all-zero column and a column that repeats
// another still fit (the ridge keeps the least squares solvable), with the
// predictions exact on noiseless data.
func TestFitDegenerateColumns(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    func(i float64) []float64
	}{
		{"zero column", func(i float64) []float64 { return []float64{1, i, 0} }},
		{"repeated column", func(i float64) []float64 { return []float64{1, i, i} }},
	} {
		var samples []Sample
		for i := 1.0; i <= 30; i++ {
			samples = append(samples, Sample{X: tc.x(i), T: 2e-3 + 3e-4*i})
		}
		got, err := FitNonNegative(samples)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for j, c := range got.Coef {
			if c < 0 {
				t.Errorf("%s: coef %d = %v < 0", tc.name, j, c)
			}
		}
		if got.MedianRelErr > 1e-9 {
			t.Errorf("%s: median relative error %v, want ~0 (coefficients %v)", tc.name, got.MedianRelErr, got.Coef)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1}, 3},
		{[]float64{2, 9, 1}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{1, 1, 1, 7, 7}, 1},
	} {
		if got := median(tc.v); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
	if got := median(nil); !math.IsNaN(got) {
		t.Errorf("median(nil) = %v, want NaN", got)
	}
}
