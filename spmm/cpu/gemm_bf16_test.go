package cpu

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"scalegnn/spmm"
	"scalegnn/spmm/spmmtest"
)

// refGemmBF16 returns alpha·op(a)·op(b) + beta·c in float64 over the
// bfloat16 values of a and b (widened exactly, so rounding the inputs is
// no error of the kernel) and its error bound, row-major m×n. beta == 0
// ignores c, as BLAS does. daz reads subnormal inputs as zero, as
// vdpbf16ps does (the bf16DPBF16 path).
//
// The bound is (k+4)·2⁻²²·(Σ|alpha·t| + |beta·c|), the bound
// spmmtest's Gemm conformance uses: four times the textbook bound for a
// float32 dot product of length k (γ(k) = k·2⁻²⁴ to first order, Higham
// eq. 3.4) plus the alpha and beta steps. Any summation order meets the
// textbook bound, so blocked sgemm on the widened chunks (whose
// inner-dimension chunks add into dst one after another), FMA kernels and
// cblas_sbgemm's exact bfloat16 products summed in float32 all do; a
// wrong element, transpose or chunk is off by O(1) relative and fails.
//
// The vdpbf16ps kernel meets it too. A product of two bfloat16 is exact
// in float32, and each lane adds its pair's two products to the sum one
// at a time, so a term passes through at most k additions within the
// chunks of KC = 512 elements, the multiplication by alpha, at most k/512
// additions of the chunks into dst and the beta step: fewer than
// 4·(k+4) roundings. What it adds is the flushing: subnormal inputs are
// read as zero (daz, in the reference) and a subnormal product or sum is
// flushed to zero, an absolute error under 2⁻¹²⁶ ≈ 1.2e-38 at each of at
// most 2k+4 steps, far below the slack tiny (1e-30) for any k under 10⁷
// (times |alpha| <= 2 here). TestGemmBF16Subnormal shows both.
func refGemmBF16(tA, tB spmm.Op, alpha float32, a, b spmm.DenseBF16, beta float32, c spmm.Dense, m, n, k int, daz bool) (want, bound []float64) {
	at := func(d spmm.DenseBF16, t spmm.Op, i, j int) float64 {
		if t == spmm.Trans {
			i, j = j, i
		}
		v := d.At(i, j)
		if daz && math.Abs(float64(v)) < 0x1p-126 {
			return 0
		}
		return float64(v)
	}
	want, bound = make([]float64, m*n), make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s, abs float64
			for l := range k {
				t := at(a, tA, i, l) * at(b, tB, l, j)
				s += t
				abs += math.Abs(t)
			}
			s *= float64(alpha)
			abs *= math.Abs(float64(alpha))
			if beta != 0 {
				cij := float64(beta) * float64(c.At(i, j))
				s += cij
				abs += math.Abs(cij)
			}
			want[i*n+j], bound[i*n+j] = s, float64(k+4)*4*u32*abs
		}
	}
	return want, bound
}

// bf16Paths returns the GemmBF16 kernels that run here.
func bf16Paths() []int {
	paths := []int{bf16Widen}
	if sbgemmAvailable() {
		paths = append(paths, bf16SBGEMM)
	}
	if dpbf16Available() {
		paths = append(paths, bf16DPBF16)
	}
	if amxAvailable {
		paths = append(paths, bf16AMX)
	}
	return paths
}

// TestGemmBF16 runs GemmBF16 in all four transpose forms on shapes that
// plan one block, blocks of rows and blocks of columns, with inner
// dimensions and row counts beyond one widening chunk (widenK, widenM)
// and beyond the vdpbf16ps kernel's chunk and blocks (odd k over 512,
// more than 256 columns, rows and columns that fill no whole
// micro-tile), strided operands, beta 0 over a NaN dst, and alpha 0 and
// k 0. It runs every kernel that exists here (bf16Paths) on 1 and 3
// threads, and checks that the vdpbf16ps kernel's results do not depend
// on the thread count, bit for bit.
func TestGemmBF16(t *testing.T) {
	t.Logf("GemmBF16Kernel: %s", GemmBF16Kernel())
	defer func(v int) { bf16Path = v }(bf16Path)
	shapes := []struct{ m, n, k int }{
		{1, 1, 1}, {3, 5, 7}, {17, 16, 130}, // one block
		{300, 40, 33},        // blocks of rows, more rows than widenM
		{20, 200, 600},       // blocks of columns, k over two widening chunks
		{130, 128, 128},      // a GCN layer's shape, small
		{37, 290, 9},         // blocks of rows, two column blocks of the kernel
		{13, 70, 1031},       // blocks of columns, three odd kernel chunks
		{4, 3, 0}, {0, 3, 4}, // empty
	}
	type scal struct{ alpha, beta float32 }
	seed := uint64(1)
	for _, tA := range []spmm.Op{spmm.NoTrans, spmm.Trans} {
		for _, tB := range []spmm.Op{spmm.NoTrans, spmm.Trans} {
			for _, s := range shapes {
				for _, ab := range []scal{{1, 0}, {-0.5, 1.25}, {0, 2}} {
					seed++
					a, b, c := gemmBF16Operands(tA, tB, s.m, s.n, s.k, ab.beta, seed)
					// One reference for all kernels: random inputs in
					// (-1, 1) have no subnormals for vdpbf16ps to flush.
					want, bound := refGemmBF16(tA, tB, ab.alpha, a, b, ab.beta, c, s.m, s.n, s.k, false)
					for _, path := range bf16Paths() {
						bf16Path = path
						var first spmm.Dense
						for _, threads := range []int{1, 3} {
							name := fmt.Sprintf("%s/%s%s/%dx%dx%d/alpha=%g,beta=%g/threads=%d",
								kernelName(path), opName(tA), opName(tB), s.m, s.n, s.k, ab.alpha, ab.beta, threads)
							got := checkGemmBF16(t, name, New(threads), tA, tB, ab.alpha, ab.beta, a, b, c, want, bound)
							if !ownBF16(path) {
								continue
							}
							if first.Data == nil {
								first = got
							} else if !sameBits(first, got) {
								t.Errorf("%s: differs from 1 thread", name)
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmBF16Subnormal documents what each kernel does with subnormal
// bfloat16 inputs: widening and sgemm keep them (OpenBLAS runs without
// DAZ), vdpbf16ps reads them as zero. Row 0 sums 2⁻¹³⁰·2¹⁰⁰ + 2⁻¹⁴⁰·2¹¹⁰
// (two subnormal inputs, terms of 2⁻³⁰) and 0.5·2⁻³¹: 2.25·2⁻³⁰ kept,
// 2⁻³² flushed. Row 1's one product, 2⁻⁷⁰·2⁻⁷⁰, is subnormal from normal
// inputs: vdpbf16ps flushes it, an error tiny absorbs. Row 2 mixes them
// with ordinary terms.
func TestGemmBF16Subnormal(t *testing.T) {
	defer func(v int) { bf16Path = v }(bf16Path)
	const m, n, k = 3, 40, 6
	av := [m][k]float32{
		{0x1p-130, 0x1p-140, 0.5, 0, 0, 0},
		{0, 0, 0, 0, 0x1p-70, 0},
		{1, -1.5, 0.25, 2, -0x1p-127, 3},
	}
	bv := [k]float32{0x1p100, 0x1p110, 0x1p-31, -3, 0x1p-70, 0.75}
	a, b := spmm.NewDenseBF16(m, k), spmm.NewDenseBF16(k, n)
	for i := range m {
		for l := range k {
			a.Data[i*k+l] = spmm.ToBF16(av[i][l])
		}
	}
	for l := range k {
		for j := range n {
			b.Data[l*n+j] = spmm.ToBF16(bv[l] * float32(1+j%3))
		}
	}
	c := spmm.NewDense(m, n)
	for _, path := range bf16Paths() {
		bf16Path = path
		want, bound := refGemmBF16(spmm.NoTrans, spmm.NoTrans, 1, a, b, 0, c, m, n, k, ownBF16(path))
		checkGemmBF16(t, kernelName(path), New(1), spmm.NoTrans, spmm.NoTrans, 1, 0, a, b, c, want, bound)
	}
	// The flushing is real: without daz in the reference our kernels fail.
	want, _ := refGemmBF16(spmm.NoTrans, spmm.NoTrans, 1, a, b, 0, c, m, n, k, false)
	for _, path := range bf16Paths() {
		if !ownBF16(path) {
			continue
		}
		bf16Path = path
		New(1).GemmBF16(spmm.NoTrans, spmm.NoTrans, 1, a, b, 0, c)
		if float64(c.At(0, 0)) == want[0] {
			t.Errorf("%s kept a subnormal input: (0, 0) = %g", kernelName(path), c.At(0, 0))
		}
	}
}

// ownBF16 says whether path is one of our kernels (AMX or vdpbf16ps),
// which flush subnormals and whose results must not depend on the thread
// count.
func ownBF16(path int) bool { return path == bf16AMX || path == bf16DPBF16 }

func kernelName(path int) string {
	defer func(v int) { bf16Path = v }(bf16Path)
	bf16Path = path
	return GemmBF16Kernel()
}

func opName(t spmm.Op) string {
	if t == spmm.Trans {
		return "T"
	}
	return "N"
}

func sameBits(x, y spmm.Dense) bool {
	for i := range x.Data {
		if math.Float32bits(x.Data[i]) != math.Float32bits(y.Data[i]) {
			return false
		}
	}
	return true
}

// gemmBF16Operands returns random strided operands for an m×n×k product
// in the given forms, and a dst, NaN where beta is 0 (which must not read
// it).
func gemmBF16Operands(tA, tB spmm.Op, m, n, k int, beta float32, seed uint64) (a, b spmm.DenseBF16, c spmm.Dense) {
	stored := func(tr spmm.Op, r, c int) (int, int) {
		if tr == spmm.Trans {
			return c, r
		}
		return r, c
	}
	ar, ac := stored(tA, m, k)
	br, bc := stored(tB, k, n)
	a = randomBF16(ar, ac, ac+3, seed)
	b = randomBF16(br, bc, bc+1, seed+1000)
	c = spmmtest.RandomDense(m, n, n+2, seed+2000)
	if beta == 0 {
		for i := range c.Data {
			c.Data[i] = float32(math.NaN())
		}
	}
	return a, b, c
}

// checkGemmBF16 runs GemmBF16 on a copy of c0, checks it against want
// and bound (refGemmBF16's) and returns it.
func checkGemmBF16(t *testing.T, name string, be *Backend, tA, tB spmm.Op, alpha, beta float32, a, b spmm.DenseBF16, c0 spmm.Dense, want, bound []float64) spmm.Dense {
	t.Helper()
	c := c0
	c.Data = slices.Clone(c0.Data)
	m, n := c.Rows, c.Cols
	be.GemmBF16(tA, tB, alpha, a, b, beta, c)
	bad := 0
	for i := range m {
		for j := range n {
			got, w := float64(c.At(i, j)), want[i*n+j]
			if !(math.Abs(got-w) <= bound[i*n+j]+tiny) {
				if bad++; bad <= 3 {
					t.Errorf("%s: (%d, %d) = %g, want %g ± %.3g", name, i, j, got, w, bound[i*n+j])
				}
			}
		}
	}
	return c
}

// TestGemmBF16Panics checks that GemmBF16 refuses shapes that do not agree
// with a spmm.ShapeError, as Gemm does.
func TestGemmBF16Panics(t *testing.T) {
	be := New(1)
	for name, f := range map[string]func(){
		"inner": func() {
			be.GemmBF16(spmm.NoTrans, spmm.NoTrans, 1, spmm.NewDenseBF16(2, 3), spmm.NewDenseBF16(4, 5), 0, spmm.NewDense(2, 5))
		},
		"dst": func() {
			be.GemmBF16(spmm.Trans, spmm.NoTrans, 1, spmm.NewDenseBF16(3, 2), spmm.NewDenseBF16(3, 5), 0, spmm.NewDense(3, 5))
		},
		"short": func() {
			be.GemmBF16(spmm.NoTrans, spmm.Trans, 1, spmm.NewDenseBF16(2, 3), spmm.DenseBF16{Rows: 5, Cols: 3, Stride: 3, Data: make([]uint16, 14)}, 0, spmm.NewDense(2, 5))
		},
	} {
		func() {
			defer func() {
				if _, ok := recover().(spmm.ShapeError); !ok {
					t.Errorf("%s: want a ShapeError panic", name)
				}
			}()
			f()
		}()
	}
}
