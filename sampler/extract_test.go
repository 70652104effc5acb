package sampler

import (
	"math"
	"math/rand/v2"
	"testing"

	"scalegnn/spmm"
)

// randomCSR returns an n×n matrix with about deg entries per row, a full
// diagonal, and values in (0, 1].
func randomCSR(seed uint64, n int, deg float64) *spmm.CSR {
	rng := rand.New(rand.NewPCG(seed, 3))
	var ri, ci []int32
	var val []float32
	for i := 0; i < n; i++ {
		ri, ci, val = append(ri, int32(i)), append(ci, int32(i)), append(val, 0.5)
		for j := 0; j < n; j++ {
			if j != i && rng.Float64() < deg/float64(n) {
				ri, ci, val = append(ri, int32(i)), append(ci, int32(j)), append(val, float32(1-rng.Float64()))
			}
		}
	}
	return spmm.FromCOO(n, n, ri, ci, val)
}

// dense returns a as a dense row-major matrix.
func dense(a *spmm.CSR) []float64 {
	d := make([]float64, a.Rows*a.Cols)
	for i := 0; i < a.Rows; i++ {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			d[i*a.Cols+int(a.ColIdx[k])] = float64(a.Val[k])
		}
	}
	return d
}

// TestExtractBlock cuts a sampled block out of an off-diagonal shard (rows
// [20, 50), columns [10, 45) of a 60×60 matrix) many times with one
// Extractor, so that the step-tagged column map is reused, and compares it
// with the dense definition; the transpose is compared too.
func TestExtractBlock(t *testing.T) {
	const n, r0, r1, c0, c1 = 60, 20, 50, 10, 45
	full := randomCSR(1, n, 8)
	fd := dense(full)
	// The shard: rows [r0, r1), columns [c0, c1), local indices.
	var ri, ci []int32
	var val []float32
	for i := r0; i < r1; i++ {
		for k := full.RowPtr[i]; k < full.RowPtr[i+1]; k++ {
			if j := int(full.ColIdx[k]); j >= c0 && j < c1 {
				ri, ci, val = append(ri, int32(i-r0)), append(ci, int32(j-c0)), append(val, full.Val[k])
			}
		}
	}
	ex := NewExtractor(spmm.FromCOO(r1-r0, c1-c0, ri, ci, val), r0, c0)
	for step := 0; step < 20; step++ {
		s := Uniform(4, 0, step, n, 25)
		p := InclusionProbability(n, 25)
		var rows, cols []int32
		for _, v := range s {
			if v >= r0 && v < r1 {
				rows = append(rows, v)
			}
			if v >= c0 && v < c1 {
				cols = append(cols, v)
			}
		}
		a, at := ex.Extract(rows, cols, rows, cols, p, true)
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		got := dense(a)
		for i, u := range rows {
			for j, v := range cols {
				want := fd[int(u)*n+int(v)]
				if u != v {
					want = float64(float32(want) * float32(1/p))
				}
				if got[i*len(cols)+j] != want {
					t.Fatalf("step %d: entry (%d, %d) = %g, want %g", step, u, v, got[i*len(cols)+j], want)
				}
			}
		}
		gt, wt := dense(at), dense(spmm.Transpose(a))
		for k := range gt {
			if gt[k] != wt[k] {
				t.Fatalf("step %d: transpose differs at %d", step, k)
			}
		}
	}
}

// TestMiniBatchAggregationIsUnbiased: for a sampled vertex v, the
// mini-batch aggregation Σ_{u ∈ N(v)∩S} ã_vu x_u is an unbiased estimate of
// the full (A·x)_v (ScaleGNN eq. 25). Over K samples holding v, the mean
// estimate must lie within 5 standard errors (the estimates' own sample
// standard deviation over √K) of the truth for every vertex: a 5σ miss has
// probability below 1e-6 per vertex, and the fixed seeds make the test
// deterministic. A wrong p (say B/N instead of (B−1)/(N−1)) shifts the mean
// by a factor (N−1)B/(N(B−1)) ≈ 1.05 here, about 15 standard errors.
func TestMiniBatchAggregationIsUnbiased(t *testing.T) {
	const n, b, draws = 80, 21, 20000
	a := randomCSR(5, n, 12)
	rng := rand.New(rand.NewPCG(8, 8))
	x := make([]float64, n)
	for i := range x {
		x[i] = 1 + rng.Float64()
	}
	truth := make([]float64, n)
	for i := 0; i < n; i++ {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			truth[i] += float64(a.Val[k]) * x[a.ColIdx[k]]
		}
	}
	sum, sumSq, cnt := make([]float64, n), make([]float64, n), make([]float64, n)
	ex := NewExtractor(a, 0, 0)
	p := InclusionProbability(n, b)
	for step := 0; step < draws; step++ {
		s := Uniform(3, 0, step, n, b)
		sub, _ := ex.Extract(s, s, s, s, p, false)
		for i, v := range s {
			e := 0.0
			for k := sub.RowPtr[i]; k < sub.RowPtr[i+1]; k++ {
				e += float64(sub.Val[k]) * x[s[sub.ColIdx[k]]]
			}
			sum[v] += e
			sumSq[v] += e * e
			cnt[v]++
		}
	}
	for v := 0; v < n; v++ {
		mean := sum[v] / cnt[v]
		sd := math.Sqrt(max(0, sumSq[v]/cnt[v]-mean*mean))
		se := sd / math.Sqrt(cnt[v])
		if math.Abs(mean-truth[v]) > 5*se+1e-9 {
			t.Errorf("vertex %d: mean mini-batch aggregation %.5f over %v samples, full %.5f (standard error %.5f)",
				v, mean, cnt[v], truth[v], se)
		}
	}
}
