package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"scalegnn/spmm"
)

// sparseDense is an r×c matrix (stride c+3, so rows are not contiguous)
// whose entries are nonzero with probability density.
func sparseDense(rng *rand.Rand, r, c int, density float64) spmm.Dense {
	m := spmm.Dense{Rows: r, Cols: c, Stride: c + 3, Data: make([]float32, r*(c+3))}
	for i := range r {
		for j := range c {
			if rng.Float64() < density {
				m.Data[i*m.Stride+j] = float32(rng.NormFloat64())
			}
		}
	}
	return m
}

// TestGemmSparse: products whose left operand is mostly zeros take the
// zero-skipping path (and dense ones sgemm), and both give alpha·op(a)·b
// + beta·dst within float32 rounding of a float64 product, for either
// op(a), several betas and every block count; the zero-skipping path
// gives the same bits however the rows are split, each entry within a
// rounding or two of the exact product.
func TestGemmSparse(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		tA      spmm.Op
		m, k, n int
		density float64
		sparse  bool
	}{
		{spmm.NoTrans, 70, 600, 9, 0.01, true},
		{spmm.NoTrans, 70, 600, 9, 0.05, true},
		{spmm.NoTrans, 70, 600, 9, 0.3, false},
		{spmm.NoTrans, 70, 300, 9, 0.01, false}, // inner dimension below sparseMinK
		{spmm.Trans, 130, 700, 17, 0.02, true},  // op(a) is 130×700: a is 700×130
		{spmm.Trans, 130, 700, 17, 0.5, false},
		{spmm.NoTrans, 10, 600, 700, 0.02, true}, // wider than a tile of accumulators
		{spmm.Trans, 1100, 600, 64, 0.02, true},  // output rows over three tiles
		{spmm.Trans, 130, 600, 520, 0.02, true},  // both
	} {
		ar, ac := tc.m, tc.k
		if tc.tA == spmm.Trans {
			ar, ac = tc.k, tc.m
		}
		a := sparseDense(rng, ar, ac, tc.density)
		b := sparseDense(rng, tc.k, tc.n, 1)
		for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.5, -2}} {
			alpha, beta := ab[0], ab[1]
			d0 := sparseDense(rng, tc.m, tc.n, 1)
			want := make([]float64, tc.m*tc.n)
			for i := range tc.m {
				for j := range tc.n {
					s := 0.0
					for k := range tc.k {
						var av float32
						if tc.tA == spmm.Trans {
							av = a.Data[k*a.Stride+i]
						} else {
							av = a.Data[i*a.Stride+k]
						}
						s += float64(av) * float64(b.Data[k*b.Stride+j])
					}
					want[i*tc.n+j] = float64(alpha)*s + float64(beta)*float64(d0.Data[i*d0.Stride+j])
				}
			}
			var first []float32
			for _, workers := range []int{1, 2, 3} {
				name := fmt.Sprintf("%v %dx%dx%d density %g alpha %g beta %g workers %d", tc.tA, tc.m, tc.k, tc.n, tc.density, alpha, beta, workers)
				dst := spmm.Dense{Rows: d0.Rows, Cols: d0.Cols, Stride: d0.Stride, Data: append([]float32(nil), d0.Data...)}
				pl := PlanGemm(tc.tA, spmm.NoTrans, a, b, dst, workers)
				if pl.Sparse != tc.sparse {
					t.Fatalf("%s: plan.Sparse %v, want %v", name, pl.Sparse, tc.sparse)
				}
				for p := range pl.Parts {
					GemmPart(pl, p, tc.tA, spmm.NoTrans, alpha, a, b, beta, dst)
				}
				var got []float32
				for i := range tc.m {
					for j := range tc.n {
						g, w := float64(dst.Data[i*dst.Stride+j]), want[i*tc.n+j]
						// sgemm: float32 sums of k terms. The zero-skipping
						// path sums in double and rounds twice: beta·dst,
						// then the result (a float32 ulp is 2⁻²³ relative).
						tol := 1e-4 * (1 + math.Abs(w))
						if tc.sparse {
							tol = 0x1p-23*(math.Abs(w)+math.Abs(float64(beta)*float64(d0.Data[i*d0.Stride+j]))) + 1e-30
						}
						if math.Abs(g-w) > tol {
							t.Fatalf("%s: [%d,%d] = %v, want %v (tolerance %.3g)", name, i, j, g, w, tol)
						}
						got = append(got, dst.Data[i*dst.Stride+j])
					}
					// The padding between rows is never written.
					for j := tc.n; j < dst.Stride; j++ {
						if dst.Data[i*dst.Stride+j] != d0.Data[i*d0.Stride+j] {
							t.Fatalf("%s: row %d's padding written", name, i)
						}
					}
				}
				if tc.sparse {
					if first == nil {
						first = got
					}
					for e := range got {
						if got[e] != first[e] {
							t.Fatalf("%s: entry %d differs from one worker's: %v, %v", name, e, got[e], first[e])
						}
					}
				}
			}
		}
	}
}
