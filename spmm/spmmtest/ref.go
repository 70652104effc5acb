package spmmtest

import (
	"math"

	"scalegnn/spmm"
)

// The reference products run in float64 with naive loops and return, next
// to each result, an error bound for a float32 kernel: (terms+2)·2⁻²²·Σ|term|,
// four times the textbook bound for recursive summation in float32
// (unit roundoff 2⁻²⁴), which blocked and FMA-based kernels also satisfy.
// A bound relative to Σ|term| rather than to the result keeps cancellation
// from failing correct kernels.

const ulp32 = 1.0 / (1 << 22)

// refSpMM returns a·b and its error bound, both row-major a.Rows×b.Cols.
func refSpMM(a *spmm.CSR, b spmm.Dense) (want, bound []float64) {
	n := b.Cols
	want = make([]float64, a.Rows*n)
	bound = make([]float64, a.Rows*n)
	for i := 0; i < a.Rows; i++ {
		lo, hi := a.RowPtr[i], a.RowPtr[i+1]
		for j := 0; j < n; j++ {
			var s, abs float64
			for p := lo; p < hi; p++ {
				t := float64(a.Val[p]) * float64(b.Data[int(a.ColIdx[p])*b.Stride+j])
				s += t
				abs += math.Abs(t)
			}
			want[i*n+j] = s
			bound[i*n+j] = float64(hi-lo+2) * ulp32 * abs
		}
	}
	return want, bound
}

// refGemm returns alpha·op(a)·op(b) + beta·c and its error bound, row-major
// m×n. beta == 0 ignores c, as BLAS does.
func refGemm(tA, tB spmm.Op, alpha float32, a, b spmm.Dense, beta float32, c spmm.Dense) (want, bound []float64) {
	at := func(d spmm.Dense, t spmm.Op, i, j int) float64 {
		if t == spmm.Trans {
			i, j = j, i
		}
		return float64(d.Data[i*d.Stride+j])
	}
	m, n := c.Rows, c.Cols
	k := a.Cols
	if tA == spmm.Trans {
		k = a.Rows
	}
	want = make([]float64, m*n)
	bound = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, abs float64
			for l := 0; l < k; l++ {
				t := at(a, tA, i, l) * at(b, tB, l, j)
				s += t
				abs += math.Abs(t)
			}
			s *= float64(alpha)
			abs *= math.Abs(float64(alpha))
			if beta != 0 {
				cij := float64(beta) * float64(c.Data[i*c.Stride+j])
				s += cij
				abs += math.Abs(cij)
			}
			want[i*n+j] = s
			bound[i*n+j] = float64(k+4) * ulp32 * abs
		}
	}
	return want, bound
}
