package cpu

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/spmm"
	"scalegnn/spmm/spmmtest"
)

// TestSpMMBitwise checks the summation order every variant of the kernel
// promises (spmm.c): each output element is 0 + v₀·b₀ + v₁·b₁ + ... over
// the row's nonzeros in index order, each product and sum rounded to
// float32. Training runs are compared bit for bit, so the kernel must
// equal this loop exactly, not within a tolerance, on every instruction
// set, at the specialised widths and around them, with strides beyond
// the width.
func TestSpMMBitwise(t *testing.T) {
	a := spmmtest.PowerLawCSR(3000, 2000, 40_000, 7)
	for p := range a.Val {
		if p%3 == 0 {
			a.Val[p] = -a.Val[p] * 1.7 // mixed signs make the order matter
		}
	}
	widths := []int{1, 3, 4, 7, 8, 12, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 96, 100, 127, 128, 129, 136, 200, 256}
	for _, x := range supportedISAs() {
		for _, threads := range []int{1, 2} {
			for _, width := range widths {
				for _, pad := range []int{0, 5} {
					b := spmmtest.RandomDense(a.Cols, width, width+pad, uint64(width))
					want := spmm.NewDense(a.Rows, width)
					sequentialSpMM(want, a, b)
					got := spmm.NewDense(a.Rows, width)
					be := &Backend{threads: threads, isa: x}
					be.SpMM(got, a, b)
					name := fmt.Sprintf("isa=%d/threads=%d/w%d/stride=%d", x, threads, width, width+pad)
					if i, j, ok := firstDiff(got, want); !ok {
						t.Fatalf("%s: dst[%d,%d] = %v, want %v (bits %08x, %08x)", name, i, j,
							got.At(i, j), want.At(i, j), math.Float32bits(got.At(i, j)), math.Float32bits(want.At(i, j)))
					}
				}
			}
		}
	}
}

// sequentialSpMM is the order of spmm.c in Go. The float32 conversion of
// each product forbids the compiler to fuse it with the sum.
func sequentialSpMM(dst spmm.Dense, a *spmm.CSR, b spmm.Dense) {
	for i := range a.Rows {
		d := dst.Row(i)
		for j := range d {
			var acc float32
			for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
				acc += float32(a.Val[p] * b.At(int(a.ColIdx[p]), j))
			}
			d[j] = acc
		}
	}
}

func firstDiff(got, want spmm.Dense) (i, j int, ok bool) {
	for i := range want.Rows {
		for j := range want.Cols {
			if math.Float32bits(got.At(i, j)) != math.Float32bits(want.At(i, j)) {
				return i, j, false
			}
		}
	}
	return 0, 0, true
}
