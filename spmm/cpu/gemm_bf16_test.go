package cpu

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/spmm"
	"scalegnn/spmm/spmmtest"
)

// refGemmBF16 returns alpha·op(a)·op(b) + beta·c in float64 over the
// bfloat16 values of a and b (widened exactly, so rounding the inputs is
// no error of the kernel) and its error bound, row-major m×n. beta == 0
// ignores c, as BLAS does.
//
// The bound is (k+4)·2⁻²²·(Σ|alpha·t| + |beta·c|), the bound
// spmmtest's Gemm conformance uses: four times the textbook bound for a
// float32 dot product of length k (γ(k) = k·2⁻²⁴ to first order, Higham
// eq. 3.4) plus the alpha and beta steps. Any summation order meets the
// textbook bound, so blocked sgemm on the widened chunks (whose
// inner-dimension chunks add into dst one after another), FMA kernels and
// cblas_sbgemm's exact bfloat16 products summed in float32 all do; a
// wrong element, transpose or chunk is off by O(1) relative and fails.
func refGemmBF16(tA, tB spmm.Op, alpha float32, a, b spmm.DenseBF16, beta float32, c spmm.Dense, m, n, k int) (want, bound []float64) {
	at := func(d spmm.DenseBF16, t spmm.Op, i, j int) float64 {
		if t == spmm.Trans {
			i, j = j, i
		}
		return float64(d.At(i, j))
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

// TestGemmBF16 runs GemmBF16 in all four transpose forms on shapes that
// plan one block, blocks of rows and blocks of columns, with inner
// dimensions and row counts beyond one widening chunk (widenK, widenM),
// strided operands, beta 0 over a NaN dst, and alpha 0 and k 0. It runs
// the widening path and, where the BLAS exports it, cblas_sbgemm.
func TestGemmBF16(t *testing.T) {
	paths := []bool{false}
	if sbgemmAvailable() {
		paths = append(paths, true)
	}
	t.Logf("GemmBF16Kernel: %s", GemmBF16Kernel())
	defer func(v bool) { useSBGEMM = v }(useSBGEMM)
	shapes := []struct{ m, n, k int }{
		{1, 1, 1}, {3, 5, 7}, {17, 16, 130}, // one block
		{300, 40, 33},        // blocks of rows, more rows than widenM
		{20, 200, 600},       // blocks of columns, k over two widening chunks
		{130, 128, 128},      // a GCN layer's shape, small
		{4, 3, 0}, {0, 3, 4}, // empty
	}
	type scal struct{ alpha, beta float32 }
	seed := uint64(1)
	for _, sb := range paths {
		useSBGEMM = sb
		for _, tA := range []spmm.Op{spmm.NoTrans, spmm.Trans} {
			for _, tB := range []spmm.Op{spmm.NoTrans, spmm.Trans} {
				for _, s := range shapes {
					for _, ab := range []scal{{1, 0}, {-0.5, 1.25}, {0, 2}} {
						for _, threads := range []int{1, 3} {
							seed++
							name := fmt.Sprintf("sbgemm=%v/%s%s/%dx%dx%d/alpha=%g,beta=%g/threads=%d",
								sb, opName(tA), opName(tB), s.m, s.n, s.k, ab.alpha, ab.beta, threads)
							checkGemmBF16(t, name, New(threads), tA, tB, ab.alpha, ab.beta, s.m, s.n, s.k, seed)
						}
					}
				}
			}
		}
	}
}

func opName(t spmm.Op) string {
	if t == spmm.Trans {
		return "T"
	}
	return "N"
}

func checkGemmBF16(t *testing.T, name string, be *Backend, tA, tB spmm.Op, alpha, beta float32, m, n, k int, seed uint64) {
	t.Helper()
	stored := func(tr spmm.Op, r, c int) (int, int) {
		if tr == spmm.Trans {
			return c, r
		}
		return r, c
	}
	ar, ac := stored(tA, m, k)
	br, bc := stored(tB, k, n)
	a := randomBF16(ar, ac, ac+3, seed)
	b := randomBF16(br, bc, bc+1, seed+1000)
	c := spmmtest.RandomDense(m, n, n+2, seed+2000)
	if beta == 0 {
		for i := range c.Data {
			c.Data[i] = float32(math.NaN()) // beta 0 must not read dst
		}
	}
	want, bound := refGemmBF16(tA, tB, alpha, a, b, beta, c, m, n, k)
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
