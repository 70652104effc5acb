package spmm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestNativeBF16 checks Native's bfloat16 products against its float32
// ones on the widened operands: SpMMBF16 bit for bit (the same order of
// summation), SpMMBF16ToBF16 as ToBF16 of that, and GemmBF16 bit for bit
// (it is Gemm on the widened operands), on 1 and 3 goroutines, tight and
// padded strides, with empty rows.
func TestNativeBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	bf := func(rows, cols, stride int) (DenseBF16, Dense) {
		h := DenseBF16{Rows: rows, Cols: cols, Stride: stride, Data: make([]uint16, max(0, (rows-1)*stride+cols))}
		for k := range h.Data {
			h.Data[k] = ToBF16(float32(r.NormFloat64()))
		}
		return h, widenDense(h)
	}
	for _, c := range []struct{ rows, cols, nnz, width, pad int }{
		{0, 3, 0, 4, 0}, {5, 4, 0, 3, 1}, {40, 30, 200, 17, 2}, {600, 500, 40000, 33, 0},
	} {
		ri, ci, v := make([]int32, c.nnz), make([]int32, c.nnz), make([]float32, c.nnz)
		for k := range ri {
			ri[k], ci[k], v[k] = r.Int32N(int32(c.rows)), r.Int32N(int32(c.cols)), float32(r.NormFloat64())
		}
		a := FromCOO(c.rows, c.cols, ri, ci, v)
		bh, bw := bf(c.cols, c.width, c.width+c.pad)
		for _, threads := range []int{1, 3} {
			name := fmt.Sprintf("%dx%d nnz=%d width=%d threads=%d", c.rows, c.cols, c.nnz, c.width, threads)
			nt := NewNative(threads)
			want, got := NewDense(c.rows, c.width), NewDense(c.rows, c.width)
			nt.SpMM(want, a, bw)
			nt.SpMMBF16(got, a, bh)
			h := NewDenseBF16(c.rows, c.width)
			nt.SpMMBF16ToBF16(h, a, bh)
			for k := range want.Data {
				if math.Float32bits(got.Data[k]) != math.Float32bits(want.Data[k]) {
					t.Fatalf("%s: SpMMBF16 element %d = %g, SpMM on the widened b %g", name, k, got.Data[k], want.Data[k])
				}
				if h.Data[k] != ToBF16(want.Data[k]) {
					t.Fatalf("%s: SpMMBF16ToBF16 element %d = %#x, want %#x", name, k, h.Data[k], ToBF16(want.Data[k]))
				}
			}
		}
	}
	for _, tA := range []Op{NoTrans, Trans} {
		for _, tB := range []Op{NoTrans, Trans} {
			m, n, k := 7, 5, 9
			ar, ac, br, bc := m, k, k, n
			if tA == Trans {
				ar, ac = k, m
			}
			if tB == Trans {
				br, bc = n, k
			}
			ah, aw := bf(ar, ac, ac+1)
			bh, bw := bf(br, bc, bc)
			want, got := NewDense(m, n), NewDense(m, n)
			for i := range want.Data {
				want.Data[i] = float32(i)
				got.Data[i] = float32(i)
			}
			nt := NewNative(1)
			nt.Gemm(tA, tB, 0.5, aw, bw, 2, want)
			nt.GemmBF16(tA, tB, 0.5, ah, bh, 2, got)
			for i := range want.Data {
				if got.Data[i] != want.Data[i] {
					t.Fatalf("GemmBF16 %v%v: element %d = %g, want %g", tA, tB, i, got.Data[i], want.Data[i])
				}
			}
		}
	}
}
