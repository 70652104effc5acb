package spmmtest

import (
	"sync"
	"testing"

	"scalegnn/spmm"
)

// Benchmark inputs are large (hundreds of MB) and slow to generate, so they
// are built once per process and shared by every backend's benchmark.
var (
	cacheMu sync.Mutex
	cache   = map[[4]int]any{}
)

func cached(key [4]int, make func() any) any {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	v, ok := cache[key]
	if !ok {
		v = make()
		cache[key] = v
	}
	return v
}

// BenchSpMM times be.SpMM on a rows×rows PowerLawCSR with about nnz entries
// times a dense rows×width matrix, and reports GFLOP/s (2 flops per
// nonzero and column).
func BenchSpMM(b *testing.B, be spmm.Backend, rows, nnz, width int) {
	a := cached([4]int{0, rows, nnz}, func() any { return PowerLawCSR(rows, rows, nnz, 1) }).(*spmm.CSR)
	x := cached([4]int{1, rows, width}, func() any { return RandomDense(rows, width, 0, 2) }).(spmm.Dense)
	dst := spmm.NewDense(rows, width)
	b.ResetTimer()
	for range b.N {
		be.SpMM(dst, a, x)
	}
	b.ReportMetric(2*float64(a.NNZ())*float64(width)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchGemm times be.Gemm(tA, tB, 1, a, b, 0, dst) for op(a) m×k and op(b)
// k×n, and reports GFLOP/s.
func BenchGemm(b *testing.B, be spmm.Backend, tA, tB spmm.Op, m, n, k int) {
	shape := func(t spmm.Op, r, c int) (int, int) {
		if t == spmm.Trans {
			return c, r
		}
		return r, c
	}
	ar, ac := shape(tA, m, k)
	br, bc := shape(tB, k, n)
	x := cached([4]int{2, ar, ac}, func() any { return RandomDense(ar, ac, 0, 3) }).(spmm.Dense)
	y := cached([4]int{3, br, bc}, func() any { return RandomDense(br, bc, 0, 4) }).(spmm.Dense)
	dst := spmm.NewDense(m, n)
	b.ResetTimer()
	for range b.N {
		be.Gemm(tA, tB, 1, x, y, 0, dst)
	}
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
