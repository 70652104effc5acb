package spmm_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"scalegnn/spmm"
)

// TestToBF16 pins the rounding rule that the bf16 all-reduce, the
// devices' PackBF16 and the kernels use: on the edge cases and on random
// bit patterns, the textbook definition (nearest of the two neighbouring
// bfloat16, ties to even) on finite values, quiet NaNs of the same sign.
func TestToBF16(t *testing.T) {
	edge := []uint32{
		0, 0x80000000, 1, 0x80000001, 0x007fffff, 0x00800000, // zeros, subnormals
		0x3f800000, 0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001, // 1 and ties either way
		0x7f7fffff, 0x7f7f8000, 0x7f7f7fff, 0xff7fffff, // overflow to ±Inf and just not
		0x7f800000, 0xff800000, // infinities
		0x7fc00000, 0x7f800001, 0xff800001, 0x7fbfffff, 0x7f80ffff, 0x7fff0000, // NaNs, signalling ones too
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		edge = append(edge, rng.Uint32())
	}
	for _, u := range edge {
		f := math.Float32frombits(u)
		got := spmm.ToBF16(f)
		w := float64(spmm.FromBF16(got))
		if f != f {
			if w == w || got&0x40 == 0 || got>>15 != uint16(u>>31) {
				t.Fatalf("ToBF16(NaN %#08x) = %#04x, want a quiet NaN of the same sign", u, got)
			}
			continue
		}
		// The neighbours of f in bfloat16: truncation and the next one up
		// in magnitude. got must be the nearer, ties to the even one.
		lo := uint16(u >> 16)
		x, a, b := float64(f), float64(spmm.FromBF16(lo)), float64(spmm.FromBF16(lo+1))
		if lo&0x7fff == 0x7f80 { // f is ±Inf
			b = a
		}
		if lo&0x7fff == 0x7f7f {
			// The next bfloat16 up would be ±2¹²⁸ with an unbounded
			// exponent; IEEE rounds to Inf where it would round to it.
			b = math.Copysign(math.Ldexp(1, 128), x)
		}
		want := a
		switch da, db := math.Abs(x-a), math.Abs(b-x); {
		case db < da, db == da && lo&1 == 1:
			want = b
		}
		if math.Abs(want) == math.Ldexp(1, 128) {
			want = math.Copysign(math.Inf(1), x)
		}
		if w != want {
			t.Fatalf("ToBF16(%g = %#08x) = %g, want %g", f, u, w, want)
		}
		if r := spmm.RoundBF16(f); r != float32(w) {
			t.Fatalf("RoundBF16(%g) = %g, want %g", f, r, w)
		}
	}
}

func TestEncodeDecodeBF16(t *testing.T) {
	src := spmm.Dense{Rows: 2, Cols: 3, Stride: 4, Data: []float32{1, 1.00390625, -3e38, 99, 1e-40, float32(math.Inf(-1)), 0.1}}
	h := spmm.DenseBF16{Rows: 2, Cols: 3, Stride: 5, Data: make([]uint16, 8)}
	h.Data[3] = 0xbeef // the gaps stay
	spmm.EncodeBF16(h, src)
	for i := range 2 {
		for j := range 3 {
			if got, want := h.Data[i*5+j], spmm.ToBF16(src.At(i, j)); got != want {
				t.Errorf("Encode (%d, %d) = %#04x, want %#04x", i, j, got, want)
			}
		}
	}
	if h.Data[3] != 0xbeef {
		t.Error("EncodeBF16 wrote into the gap between rows")
	}
	back := spmm.NewDense(2, 3)
	spmm.DecodeBF16(back, h)
	for i := range 2 {
		for j := range 3 {
			if got, want := back.At(i, j), spmm.RoundBF16(src.At(i, j)); got != want {
				t.Errorf("Decode (%d, %d) = %g, want %g", i, j, got, want)
			}
			if got := h.At(i, j); got != back.At(i, j) {
				t.Errorf("At(%d, %d) = %g, want %g", i, j, got, back.At(i, j))
			}
		}
	}
	v := spmm.SliceBF16(h, 1, 2, 1, 3)
	if v.Rows != 1 || v.Cols != 2 || v.At(0, 0) != h.At(1, 1) || v.At(0, 1) != h.At(1, 2) {
		t.Errorf("SliceBF16 = %+v", v)
	}
}

func TestBF16ShapePanics(t *testing.T) {
	a := &spmm.CSR{Rows: 2, Cols: 3, RowPtr: make([]int64, 3)}
	for name, f := range map[string]func(){
		"Encode shape": func() { spmm.EncodeBF16(spmm.NewDenseBF16(2, 3), spmm.NewDense(3, 2)) },
		"Decode short": func() {
			spmm.DecodeBF16(spmm.NewDense(2, 3), spmm.DenseBF16{Rows: 2, Cols: 3, Stride: 3, Data: make([]uint16, 5)})
		},
		"stride":        func() { spmm.DenseBF16{Rows: 2, Cols: 3, Stride: 2, Data: make([]uint16, 9)}.Check("x") },
		"At":            func() { spmm.NewDenseBF16(2, 3).At(2, 0) },
		"Slice":         func() { spmm.SliceBF16(spmm.NewDenseBF16(2, 3), 0, 3, 0, 1) },
		"SpMM b rows":   func() { spmm.CheckSpMMBF16(spmm.NewDense(2, 4), a, spmm.NewDenseBF16(2, 4)) },
		"SpMM dst cols": func() { spmm.CheckSpMMBF16(spmm.NewDenseBF16(2, 5), a, spmm.NewDenseBF16(3, 4)) },
		"SpMM row ptrs": func() { spmm.CheckSpMMBF16(spmm.NewDense(2, 4), &spmm.CSR{Rows: 2, Cols: 3}, spmm.NewDenseBF16(3, 4)) },
		"Gemm inner": func() {
			spmm.CheckGemmBF16(spmm.NoTrans, spmm.NoTrans, spmm.NewDenseBF16(2, 3), spmm.NewDenseBF16(4, 5), spmm.NewDense(2, 5))
		},
		"Gemm trans dst": func() {
			spmm.CheckGemmBF16(spmm.Trans, spmm.NoTrans, spmm.NewDenseBF16(2, 3), spmm.NewDenseBF16(2, 5), spmm.NewDense(2, 5))
		},
		"Gemm short data": func() {
			spmm.CheckGemmBF16(spmm.NoTrans, spmm.NoTrans, spmm.DenseBF16{Rows: 2, Cols: 3, Stride: 3}, spmm.NewDenseBF16(3, 5), spmm.NewDense(2, 5))
		},
	} {
		func() {
			defer func() {
				err, _ := recover().(error)
				var se spmm.ShapeError
				if !errors.As(err, &se) {
					t.Errorf("%s: panic %v, want a ShapeError", name, err)
				}
			}()
			f()
		}()
	}
	// Well-formed shapes pass, and CheckGemmBF16 returns m, n, k.
	spmm.CheckSpMMBF16(spmm.NewDense(2, 4), a, spmm.NewDenseBF16(3, 4))
	spmm.CheckSpMMBF16(spmm.NewDenseBF16(2, 4), a, spmm.NewDenseBF16(3, 4))
	if m, n, k := spmm.CheckGemmBF16(spmm.Trans, spmm.Trans, spmm.NewDenseBF16(3, 2), spmm.NewDenseBF16(5, 3), spmm.NewDense(2, 5)); m != 2 || n != 5 || k != 3 {
		t.Errorf("CheckGemmBF16 = %d, %d, %d, want 2, 5, 3", m, n, k)
	}
}

// TestEncodeDecodeBF16Empty: views with rows but no columns (and no data)
// convert to nothing instead of indexing their rows.
func TestEncodeDecodeBF16Empty(t *testing.T) {
	h := spmm.DenseBF16{Rows: 3, Cols: 0, Stride: 4}
	f := spmm.Dense{Rows: 3, Cols: 0, Stride: 2}
	spmm.EncodeBF16(h, f)
	spmm.DecodeBF16(f, h)
}
