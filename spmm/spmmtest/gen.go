package spmmtest

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"scalegnn/spmm"
)

// newRand returns the deterministic generator every helper draws from, so a
// failing case reproduces from its seed alone.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5ca1e6)) }

// RandomDense returns an r×c matrix with entries uniform in [-1, 1) and
// the given stride (stride < c means c). The gaps between rows hold NaN, so
// a kernel that reads or writes outside the view is caught.
func RandomDense(r, c, stride int, seed uint64) spmm.Dense {
	if stride < c {
		stride = c
	}
	rng := newRand(seed)
	d := spmm.Dense{Rows: r, Cols: c, Stride: stride, Data: make([]float32, r*stride)}
	for i := range d.Data {
		if i%stride < c {
			d.Data[i] = 2*rng.Float32() - 1
		} else {
			d.Data[i] = float32(math.NaN())
		}
	}
	return d
}

// RandomCSR returns a rows×cols matrix in which each entry is present with
// probability density, with values uniform in [-1, 1). Sparse densities
// leave some rows empty, which every kernel must handle.
func RandomCSR(rows, cols int, density float64, seed uint64) *spmm.CSR {
	rng := newRand(seed)
	a := &spmm.CSR{Rows: rows, Cols: cols, RowPtr: make([]int64, rows+1)}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if rng.Float64() < density {
				a.ColIdx = append(a.ColIdx, int32(j))
				a.Val = append(a.Val, 2*rng.Float32()-1)
			}
		}
		a.RowPtr[i+1] = int64(len(a.ColIdx))
	}
	return a
}

// PowerLawCSR returns a rows×cols matrix with about nnz entries whose row
// degrees follow a power law (Pareto, exponent 2.5) and whose columns are
// drawn with the same skew, in random order: a stand-in for a randomly
// permuted social or web graph, where a few hub rows hold a large share of
// the nonzeros and hub columns are read over and over. Values are uniform
// in (0, 1], like a normalised adjacency.
func PowerLawCSR(rows, cols, nnz int, seed uint64) *spmm.CSR {
	rng := newRand(seed)
	weights := func(n int) []float64 {
		w := make([]float64, n)
		for i := range w {
			w[i] = math.Pow(1-rng.Float64(), -1/1.5)
		}
		return w
	}
	rw, cw := weights(rows), weights(cols)
	var sum float64
	for _, w := range rw {
		sum += w
	}
	cum := make([]float64, cols)
	var acc float64
	for j, w := range cw {
		acc += w
		cum[j] = acc
	}
	a := &spmm.CSR{Rows: rows, Cols: cols, RowPtr: make([]int64, rows+1)}
	a.ColIdx = make([]int32, 0, nnz+nnz/8)
	for i := 0; i < rows; i++ {
		deg := min(int(math.Round(rw[i]*float64(nnz)/sum)), cols)
		start := len(a.ColIdx)
		for range deg {
			j := sort.SearchFloat64s(cum, rng.Float64()*acc)
			a.ColIdx = append(a.ColIdx, int32(min(j, cols-1)))
		}
		row := a.ColIdx[start:]
		slices.Sort(row)
		a.ColIdx = a.ColIdx[:start+len(slices.Compact(row))]
		a.RowPtr[i+1] = int64(len(a.ColIdx))
	}
	a.Val = make([]float32, len(a.ColIdx))
	for p := range a.Val {
		a.Val[p] = 1 - rng.Float32()
	}
	return a
}
