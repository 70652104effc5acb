package collectives

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refBF16 rounds f to bfloat16 the slow way: of the two bfloat16 values
// around f, the nearer one in float64 arithmetic, the even one on a tie.
func refBF16(f float32) uint16 {
	if f != f {
		return 0x7fc0
	}
	down := uint16(math.Float32bits(f) >> 16)
	up := down + 1
	if math.Float32bits(f)&0xffff == 0 {
		return down
	}
	x := float64(f)
	dd, du := math.Abs(x-float64(FromBF16(down))), math.Abs(float64(FromBF16(up))-x)
	if up&0x7fff == 0x7f80 { // rounding up overflows to infinity
		// IEEE: overflow when |f| is at least the midpoint to 2^128.
		du = math.Abs(math.Ldexp(1, 128)*math.Copysign(1, x) - x)
	}
	switch {
	case dd < du:
		return down
	case du < dd:
		return up
	case down&1 == 0:
		return down
	}
	return up
}

func TestToBF16MatchesReference(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 1 + 1.0/256, 1 + 3.0/256, 1 + 1.0/512,
		float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, 1e-40, 3.14159265, 65504, 0.1}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		special = append(special, math.Float32frombits(rng.Uint32()))
	}
	for _, f := range special {
		got := ToBF16(f)
		if f != f {
			if g := FromBF16(got); g == g {
				t.Fatalf("ToBF16(NaN %#x) = %#x, not a NaN", math.Float32bits(f), got)
			}
			continue
		}
		if want := refBF16(f); got != want {
			t.Fatalf("ToBF16(%g = %#x) = %#x, want %#x", f, math.Float32bits(f), got, want)
		}
	}
}

func TestBF16RoundTripIsExact(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := FromBF16(uint16(h))
		if f != f {
			continue
		}
		if got := ToBF16(f); got != uint16(h) {
			t.Fatalf("ToBF16(FromBF16(%#x)) = %#x", h, got)
		}
	}
}

func TestAddBF16(t *testing.T) {
	for _, c := range []struct{ a, b, want float32 }{
		{1, 1, 2},
		{1, 1.0 / 256, 1},          // the exact sum is a tie: even is 1
		{1, 3.0 / 256, 1 + 1.0/64}, // 1 + 3/256 ties up to the even 1 + 4/256
		{256, 1, 256},              // 257 is a tie between 256 and 258
		{-3, 3, 0},
	} {
		if got := FromBF16(AddBF16(ToBF16(c.a), ToBF16(c.b))); got != c.want {
			t.Errorf("AddBF16(%g, %g) = %g, want %g", c.a, c.b, got, c.want)
		}
	}
}

func TestLocalAllReduceBF16RankOrder(t *testing.T) {
	// Rank-order bfloat16 summation, checked against a serial loop on
	// values that do not add exactly.
	const n, size = 257, 5
	val := func(r, i int) float32 { return float32(math.Sin(float64(r*n+i))) * float32(1+i%7) }
	want := make([]float32, n)
	for i := range want {
		acc := ToBF16(val(0, i))
		for r := 1; r < size; r++ {
			acc = AddBF16(acc, ToBF16(val(r, i)))
		}
		want[i] = FromBF16(acc)
	}
	errs := RunLocal(size, func(c Comm) error {
		buf := make([]float32, n)
		for i := range buf {
			buf[i] = val(c.Rank(), i)
		}
		if err := c.AllReduceBF16(buf); err != nil {
			return err
		}
		for i := range buf {
			if buf[i] != want[i] {
				t.Errorf("rank %d: element %d = %g, want %g", c.Rank(), i, buf[i], want[i])
				break
			}
		}
		if got := c.Counters().Bytes(KindAllReduce); got != 2*n {
			t.Errorf("rank %d counted %d bytes, want %d", c.Rank(), got, 2*n)
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
