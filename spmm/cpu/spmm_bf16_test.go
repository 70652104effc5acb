package cpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"scalegnn/spmm"
	"scalegnn/spmm/spmmtest"
)

// randomBF16 returns an r×c bfloat16 matrix with the given stride: the
// values of spmmtest.RandomDense (uniform in [-1, 1), NaN in the gaps
// between rows, so a kernel that reads outside the view shows it) rounded
// to bfloat16.
func randomBF16(r, c, stride int, seed uint64) spmm.DenseBF16 {
	f := spmmtest.RandomDense(r, c, stride, seed)
	h := spmm.DenseBF16{Rows: r, Cols: c, Stride: f.Stride, Data: make([]uint16, len(f.Data))}
	for i, v := range f.Data {
		h.Data[i] = spmm.ToBF16(v)
	}
	return h
}

// widenBF16 returns b widened to float32, stride and gaps included.
func widenBF16(b spmm.DenseBF16) spmm.Dense {
	f := spmm.Dense{Rows: b.Rows, Cols: b.Cols, Stride: b.Stride, Data: make([]float32, len(b.Data))}
	for i, h := range b.Data {
		f.Data[i] = spmm.FromBF16(h)
	}
	return f
}

// Error bounds of the bf16 SpMM conformance test. The reference is the
// product in float64 of the same operands, a's float32 values and b's
// bfloat16 values widened exactly, so the inputs' rounding to bfloat16 is
// not an error of the kernel. What is left is the kernel's float32
// arithmetic: each product v·b rounded once and the row's nnz products
// summed one after another, each sum rounded. The textbook bound for that
// (Higham, Accuracy and Stability, eq. 3.4) is
//
//	|got - want| ≤ γ(nnz) · Σ|v·b|,  γ(n) = n·u/(1 - n·u),  u = 2⁻²⁴,
//
// a worst case, not a guess: rounding errors of random signs grow like
// √nnz·u instead, so correct kernels sit far inside it, while a wrong
// column, a dropped nonzero or a misread bfloat16 is off by a whole term,
// O(1) relative to Σ|v·b|, and fails. With bfloat16 output each element
// is rounded once more, to nearest with an 8-bit significand: at most
// 2⁻⁸·|x| relative (unit roundoff of bfloat16), added to the bound with
// |x| ≤ |want| + the float32 bound. Subnormal results do not arise here
// (|v|, |b| ≥ 2⁻²⁴ or zero, and sums of a few hundred terms).
const (
	u32  = 1.0 / (1 << 24)
	ubf  = 1.0 / (1 << 8)
	tiny = 1e-30 // absolute slack for exact zeros
)

func gamma(n int) float64 { return float64(n) * u32 / (1 - float64(n)*u32) }

// refSpMMBF16 returns a·b in float64 and the float32 kernel's error bound,
// row-major a.Rows×b.Cols.
func refSpMMBF16(a *spmm.CSR, b spmm.DenseBF16) (want, bound []float64) {
	n := b.Cols
	want, bound = make([]float64, a.Rows*n), make([]float64, a.Rows*n)
	for i := range a.Rows {
		lo, hi := a.RowPtr[i], a.RowPtr[i+1]
		for j := range n {
			var s, abs float64
			for p := lo; p < hi; p++ {
				t := float64(a.Val[p]) * float64(b.At(int(a.ColIdx[p]), j))
				s += t
				abs += math.Abs(t)
			}
			want[i*n+j], bound[i*n+j] = s, gamma(int(hi-lo))*abs
		}
	}
	return want, bound
}

// TestSpMMBF16Conformance runs both bf16 products on every instruction set
// the CPU runs, 1 and 2 threads, the widths around the specialised ones,
// tight and padded strides, against refSpMMBF16 within the bounds above,
// and checks that nothing outside dst's view is written.
func TestSpMMBF16Conformance(t *testing.T) {
	empty := &spmm.CSR{Rows: 5, Cols: 4, RowPtr: make([]int64, 6)}
	mats := []struct {
		name string
		a    *spmm.CSR
	}{
		{"empty", empty},
		{"random", spmmtest.RandomCSR(300, 200, 0.02, 11)}, // about 1 row in 60 empty
		{"powerlaw", spmmtest.PowerLawCSR(700, 500, 9000, 12)},
		{"dense-rows", spmmtest.RandomCSR(20, 400, 0.9, 13)},
	}
	for _, m := range mats {
		for _, x := range supportedISAs() {
			for _, threads := range []int{1, 2} {
				for _, width := range []int{1, 3, 16, 17, 32, 64, 128, 130} {
					for _, pad := range []int{0, 3} {
						name := fmt.Sprintf("%s/isa=%d/threads=%d/w%d/pad=%d", m.name, x, threads, width, pad)
						be := &Backend{threads: threads, isa: x}
						b := randomBF16(m.a.Cols, width, width+pad, uint64(width*10+pad))
						want, bound := refSpMMBF16(m.a, b)
						checkSpMMBF16Out(t, name, be, m.a, b, pad, want, bound)
					}
				}
			}
		}
	}
}

// sentinel32 and sentinel16 fill dst around the view: values no product
// writes by accident.
const (
	sentinel32 = -12345.5
	sentinel16 = 0xdead
)

// checkSpMMBF16Out runs SpMMBF16 and SpMMBF16ToBF16 into dst views padded
// by pad on every side and checks them against want within bound.
func checkSpMMBF16Out(t *testing.T, name string, be *Backend, a *spmm.CSR, b spmm.DenseBF16, pad int, want, bound []float64) {
	t.Helper()
	r, c := a.Rows, b.Cols
	w32 := spmm.Dense{Rows: r + 2*pad, Cols: c + 2*pad, Stride: c + 2*pad, Data: make([]float32, (r+2*pad)*(c+2*pad))}
	w16 := spmm.DenseBF16{Rows: w32.Rows, Cols: w32.Cols, Stride: w32.Stride, Data: make([]uint16, len(w32.Data))}
	for i := range w32.Data {
		w32.Data[i], w16.Data[i] = sentinel32, sentinel16
	}
	d32 := spmm.Slice(w32, pad, pad+r, pad, pad+c)
	d16 := spmm.SliceBF16(w16, pad, pad+r, pad, pad+c)
	be.SpMMBF16(d32, a, b)
	be.SpMMBF16ToBF16(d16, a, b)
	bad := 0
	for i := range r {
		for j := range c {
			k := i*c + j
			g32, g16 := float64(d32.At(i, j)), float64(d16.At(i, j))
			tol16 := bound[k] + ubf*(math.Abs(want[k])+bound[k])
			if !(math.Abs(g32-want[k]) <= bound[k]+tiny) || !(math.Abs(g16-want[k]) <= tol16+tiny) {
				if bad++; bad <= 3 {
					t.Errorf("%s: (%d, %d) = %g (f32 out), %g (bf16 out), want %g ± %.3g / %.3g",
						name, i, j, g32, g16, want[k], bound[k], tol16)
				}
			}
		}
	}
	for i := range w32.Rows {
		for j := range w32.Cols {
			if i >= pad && i < pad+r && j >= pad && j < pad+c {
				continue
			}
			if w32.Data[i*w32.Stride+j] != sentinel32 || w16.Data[i*w16.Stride+j] != sentinel16 {
				t.Fatalf("%s: wrote outside dst at (%d, %d) of the padded matrix", name, i-pad, j-pad)
			}
		}
	}
}

// TestSpMMBF16Bitwise checks the promise of spmm.c's element kinds, exactly:
// SpMMBF16 equals the float32 kernel's summation order (sequentialSpMM) on
// b widened to float32, and SpMMBF16ToBF16 equals spmm.ToBF16 of that, bit
// for bit on every instruction set, at the specialised widths and around
// them, with strides beyond the width. Mixed signs make the order matter.
func TestSpMMBF16Bitwise(t *testing.T) {
	a := spmmtest.PowerLawCSR(1500, 1000, 20_000, 7)
	for p := range a.Val {
		if p%3 == 0 {
			a.Val[p] = -a.Val[p] * 1.7
		}
	}
	for _, width := range []int{1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 48, 64, 65, 100, 128, 129, 200} {
		for _, pad := range []int{0, 5} {
			b := randomBF16(a.Cols, width, width+pad, uint64(width))
			want := spmm.NewDense(a.Rows, width)
			sequentialSpMM(want, a, widenBF16(b))
			for _, x := range supportedISAs() {
				for _, threads := range []int{1, 2} {
					name := fmt.Sprintf("isa=%d/threads=%d/w%d/stride=%d", x, threads, width, width+pad)
					be := &Backend{threads: threads, isa: x}
					got := spmm.NewDense(a.Rows, width)
					be.SpMMBF16(got, a, b)
					if i, j, ok := firstDiff(got, want); !ok {
						t.Fatalf("%s: dst[%d,%d] = %v, want %v (bits %08x, %08x)", name, i, j,
							got.At(i, j), want.At(i, j), math.Float32bits(got.At(i, j)), math.Float32bits(want.At(i, j)))
					}
					got16 := spmm.NewDenseBF16(a.Rows, width)
					be.SpMMBF16ToBF16(got16, a, b)
					checkRounded(t, name, got16, want)
				}
			}
		}
	}
}

// checkRounded checks got == spmm.ToBF16(want) bit for bit.
func checkRounded(t *testing.T, name string, got spmm.DenseBF16, want spmm.Dense) {
	t.Helper()
	for i := range want.Rows {
		for j := range want.Cols {
			if g, w := got.Data[i*got.Stride+j], spmm.ToBF16(want.At(i, j)); g != w {
				t.Fatalf("%s: bf16 dst[%d,%d] = %#04x, want %#04x (ToBF16 of %v)", name, i, j, g, w, want.At(i, j))
			}
		}
	}
}

// TestSpMMBF16Rounding checks the vector and scalar rounding of bf16
// output against spmm.ToBF16 on the values where rounding rules differ:
// ties either way, subnormals (vcvtneps2bf16 would flush them), overflow
// to Inf, infinities and NaNs (signalling ones come out quiet). Row i of a
// is the single entry x_i in column 0 and b is a row of ones, so every
// element of output row i is the float32 sum 0 + x_i·1 = x_i, and the
// width (16+16+3) runs both a vector chunk and the scalar tail.
func TestSpMMBF16Rounding(t *testing.T) {
	bits := []uint32{
		0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001, 0xbf808000, 0xbf818000,
		0x00008000, 0x00018000, 0x00000001, 0x807fffff, 0x007f8000, 0x00ff8000,
		0x7f7f7fff, 0x7f7f8000, 0x7f7fffff, 0xff7f8000, 0x7f800000, 0xff800000,
		0x7fc00000, 0x7f800001, 0xffbfffff, 0x7fff8000, 0x00000000, 0x80000000,
	}
	n := len(bits)
	a := &spmm.CSR{Rows: n, Cols: 1, RowPtr: make([]int64, n+1), ColIdx: make([]int32, n), Val: make([]float32, n)}
	for i, u := range bits {
		a.RowPtr[i+1], a.Val[i] = int64(i+1), math.Float32frombits(u)
	}
	const width = 35
	b := spmm.NewDenseBF16(1, width)
	for j := range b.Data {
		b.Data[j] = spmm.ToBF16(1)
	}
	for _, x := range supportedISAs() {
		be := &Backend{threads: 1, isa: x}
		f32 := spmm.NewDense(n, width)
		be.SpMMBF16(f32, a, b)
		got := spmm.NewDenseBF16(n, width)
		be.SpMMBF16ToBF16(got, a, b)
		for i, u := range bits {
			var acc float32
			acc += math.Float32frombits(u) * 1 // the kernel's 0 + x·1: -0 becomes +0, NaNs quiet
			for j := range width {
				if g := got.Data[i*width+j]; g != spmm.ToBF16(acc) || g != spmm.ToBF16(f32.At(i, j)) {
					t.Fatalf("isa=%d: x = %#08x: bf16 out (%d, %d) = %#04x, want %#04x", x, u, i, j, g, spmm.ToBF16(acc))
				}
			}
		}
	}
}

// TestSpMMBF16Panics checks the bf16 products' refusals: shapes that do not
// agree and malformed CSR structure panic with a spmm.ShapeError.
func TestSpMMBF16Panics(t *testing.T) {
	be := New(1)
	good := func() *spmm.CSR {
		return &spmm.CSR{Rows: 3, Cols: 4, RowPtr: []int64{0, 2, 2, 3}, ColIdx: []int32{0, 3, 1}, Val: []float32{1, 2, 3}}
	}
	bad := good()
	bad.ColIdx[1] = 4
	short := good()
	short.Val = short.Val[:2]
	for name, f := range map[string]func(){
		"b rows":   func() { be.SpMMBF16(spmm.NewDense(3, 5), good(), spmm.NewDenseBF16(3, 5)) },
		"dst cols": func() { be.SpMMBF16ToBF16(spmm.NewDenseBF16(3, 4), good(), spmm.NewDenseBF16(4, 5)) },
		"b short": func() {
			be.SpMMBF16(spmm.NewDense(3, 5), good(), spmm.DenseBF16{Rows: 4, Cols: 5, Stride: 5, Data: make([]uint16, 19)})
		},
		"column":        func() { be.SpMMBF16(spmm.NewDense(3, 5), bad, spmm.NewDenseBF16(4, 5)) },
		"column bf16":   func() { be.SpMMBF16ToBF16(spmm.NewDenseBF16(3, 5), bad, spmm.NewDenseBF16(4, 5)) },
		"short values":  func() { be.SpMMBF16(spmm.NewDense(3, 5), short, spmm.NewDenseBF16(4, 5)) },
		"rows function": func() { SpMMRowsBF16(spmm.NewDense(3, 5), bad, spmm.NewDenseBF16(4, 5), 0, 3) },
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
}

// TestSpMMRowsBF16 checks the entry point for callers with threads of their
// own: two ranges together give Backend's result.
func TestSpMMRowsBF16(t *testing.T) {
	a := spmmtest.PowerLawCSR(400, 300, 5000, 3)
	b := randomBF16(300, 64, 0, 4)
	want := spmm.NewDense(400, 64)
	New(1).SpMMBF16(want, a, b)
	got, got16 := spmm.NewDense(400, 64), spmm.NewDenseBF16(400, 64)
	for _, r := range [][2]int{{0, 123}, {123, 400}} {
		SpMMRowsBF16(got, a, b, r[0], r[1])
		SpMMRowsBF16(got16, a, b, r[0], r[1])
	}
	if i, j, ok := firstDiff(got, want); !ok {
		t.Fatalf("dst[%d,%d] = %v, want %v", i, j, got.At(i, j), want.At(i, j))
	}
	checkRounded(t, "SpMMRowsBF16", got16, want)
}

// TestSpMMBF16MaskedBitwise: SpMMBF16ToBF16Masked equals spmm.MaskedBF16
// of the sequential float32 sums, bit for bit, on every instruction set,
// at the specialised widths, odd ones (the scalar tail) and past them,
// with random keep and pos bits and a scale that is not a power of two
// (the product rounds), on a matrix whose sums include negative values
// (so a dropped entry is −0 where pos keeps it). Rows of the special
// values of TestSpMMBF16Rounding (ties, subnormals, overflow, Inf, NaN)
// run through the vector epilogue and its scalar tail.
func TestSpMMBF16MaskedBitwise(t *testing.T) {
	a := spmmtest.PowerLawCSR(1500, 1000, 20_000, 7)
	for p := range a.Val {
		if p%3 == 0 {
			a.Val[p] = -a.Val[p] * 1.7
		}
	}
	const scale = float32(1 / (1 - 0.3))
	r := rand.New(rand.NewPCG(11, 12))
	for _, width := range []int{1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 48, 64, 65, 100, 128, 129, 200} {
		b := randomBF16(a.Cols, width, width+3, uint64(width))
		want := spmm.NewDense(a.Rows, width)
		sequentialSpMM(want, a, widenBF16(b))
		wpr := spmm.MaskWords(width)
		keep, pos := make([]uint64, a.Rows*wpr), make([]uint64, a.Rows*wpr)
		for k := range keep {
			keep[k], pos[k] = r.Uint64(), r.Uint64()
		}
		for _, x := range supportedISAs() {
			for _, threads := range []int{1, 2} {
				name := fmt.Sprintf("isa=%d/threads=%d/w%d", x, threads, width)
				be := &Backend{threads: threads, isa: x}
				got := spmm.NewDenseBF16(a.Rows, width)
				for k := range got.Data {
					got.Data[k] = 0xdead
				}
				be.SpMMBF16ToBF16Masked(got, a, b, keep, pos, scale)
				checkMasked(t, name, got, want, keep, pos, scale)
			}
		}
	}

	// Special sums: row i is x_i·1 in every column.
	bits := []uint32{
		0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001, 0xbf808000, 0xbf818000,
		0x00008000, 0x00018000, 0x00000001, 0x807fffff, 0x007f8000, 0x00ff8000,
		0x7f7f7fff, 0x7f7f8000, 0x7f7fffff, 0xff7f8000, 0x7f800000, 0xff800000,
		0x7fc00000, 0x7f800001, 0xffbfffff, 0x7fff8000, 0x00000000, 0x80000000,
	}
	n, width := len(bits), 16+16+3
	sp := &spmm.CSR{Rows: n, Cols: 1, RowPtr: make([]int64, n+1), ColIdx: make([]int32, n), Val: make([]float32, n)}
	for i, u := range bits {
		sp.RowPtr[i+1], sp.Val[i] = int64(i+1), math.Float32frombits(u)
	}
	ones := spmm.NewDenseBF16(1, width)
	for j := range ones.Data {
		ones.Data[j] = spmm.ToBF16(1)
	}
	want := spmm.NewDense(n, width)
	sequentialSpMM(want, sp, widenBF16(ones))
	wpr := spmm.MaskWords(width)
	keep, pos := make([]uint64, n*wpr), make([]uint64, n*wpr)
	for k := range keep {
		keep[k], pos[k] = r.Uint64(), r.Uint64()
	}
	for _, x := range supportedISAs() {
		be := &Backend{threads: 1, isa: x}
		got := spmm.NewDenseBF16(n, width)
		be.SpMMBF16ToBF16Masked(got, sp, ones, keep, pos, 1.5)
		checkMasked(t, fmt.Sprintf("special isa=%d", x), got, want, keep, pos, 1.5)
	}
}

// checkMasked checks got == spmm.MaskedBF16 of want under the masks, bit
// for bit.
func checkMasked(t *testing.T, name string, got spmm.DenseBF16, want spmm.Dense, keep, pos []uint64, scale float32) {
	t.Helper()
	wpr := spmm.MaskWords(want.Cols)
	for i := range want.Rows {
		for j := range want.Cols {
			k, q := keep[i*wpr+j/64]>>(j%64)&1 != 0, pos[i*wpr+j/64]>>(j%64)&1 != 0
			if g, w := got.Data[i*got.Stride+j], spmm.MaskedBF16(want.At(i, j), k, q, scale); g != w {
				t.Fatalf("%s: dst[%d,%d] = %#04x, want %#04x (MaskedBF16 of %v, keep %v, pos %v)", name, i, j, g, w, want.At(i, j), k, q)
			}
		}
	}
}
