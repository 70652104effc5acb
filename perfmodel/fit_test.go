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
