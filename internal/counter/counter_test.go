package counter

import (
	"math"
	"testing"
)

// TestKnownValues pins the draws: checkpoints, golden masks and the C copy
// in device/internal/ckern all depend on these exact bits.
func TestKnownValues(t *testing.T) {
	if got, want := Mix(0), uint64(0); got != want {
		t.Errorf("Mix(0) = %#x, want %#x", got, want)
	}
	if got, want := Mix(1), uint64(0x5692161d100b05e5); got != want {
		t.Errorf("Mix(1) = %#x, want %#x", got, want)
	}
	if got, want := Hash4(1, 2, 3, 4), hash4Ref(1, 2, 3, 4); got != want {
		t.Errorf("Hash4(1, 2, 3, 4) = %#x, want %#x", got, want)
	}
}

// hash4Ref is Hash4 written from the splitmix64 steps, apart from Mix.
func hash4Ref(a, b, c, d uint64) uint64 {
	m := func(z uint64) uint64 {
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
	h := m(a + 0x9e3779b97f4a7c15)
	h = m(h ^ (b + 0x632be59bd9b4e019))
	h = m(h ^ (c + 0x85ebca77c2b2ae63))
	return m(h ^ (d + 0xc2b2ae3d27d4eb4f))
}

// TestDropoutRate: over many draws the kept fraction is 1−p within five
// standard errors, and p = 0 keeps everything.
func TestDropoutRate(t *testing.T) {
	for _, p := range []float64{0, 0.1, 0.5, 0.9} {
		th := DropoutThreshold(p)
		kept, n := 0, 0
		for v := int32(0); v < 200; v++ {
			key := DropoutKey(7, 3, 1, v)
			for col := range 500 {
				kept += int(Keep01(key, col, th))
				n++
			}
		}
		frac := float64(kept) / float64(n)
		if se := math.Sqrt(p * (1 - p) / float64(n)); math.Abs(frac-(1-p)) > 5*se+1e-12 {
			t.Errorf("p = %v: kept %.4f, want %.4f ± %.4f", p, frac, 1-p, 5*se)
		}
	}
}
