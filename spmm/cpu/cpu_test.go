package cpu_test

import (
	"errors"
	"fmt"
	"testing"

	"scalegnn/spmm"
	"scalegnn/spmm/cpu"
	"scalegnn/spmm/spmmtest"
)

func TestBackend(t *testing.T) {
	for _, threads := range []int{1, 3, 0} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			spmmtest.TestBackend(t, cpu.New(threads))
		})
	}
}

// TestBadCSR checks that the C kernel refuses malformed structure with a
// ShapeError instead of reading outside the slices.
func TestBadCSR(t *testing.T) {
	good := func() *spmm.CSR {
		return &spmm.CSR{Rows: 3, Cols: 4, RowPtr: []int64{0, 2, 2, 3},
			ColIdx: []int32{0, 3, 1}, Val: []float32{1, 2, 3}}
	}
	for name, breakIt := range map[string]func(a *spmm.CSR){
		"column too big":   func(a *spmm.CSR) { a.ColIdx[1] = 4 },
		"negative column":  func(a *spmm.CSR) { a.ColIdx[2] = -1 },
		"pointer too big":  func(a *spmm.CSR) { a.RowPtr[3] = 4 },
		"negative pointer": func(a *spmm.CSR) { a.RowPtr[0] = -1 },
		"decreasing":       func(a *spmm.CSR) { a.RowPtr[2] = 1 },
		"short values":     func(a *spmm.CSR) { a.Val = a.Val[:2] },
		"no entries":       func(a *spmm.CSR) { a.ColIdx, a.Val = nil, nil },
	} {
		a := good()
		breakIt(a)
		func() {
			defer func() {
				r := recover()
				err, ok := r.(error)
				var se spmm.ShapeError
				if !ok || !errors.As(err, &se) {
					t.Errorf("%s: panic %v, want a ShapeError", name, r)
				}
			}()
			cpu.New(1).SpMM(spmm.NewDense(3, 5), a, spmm.NewDense(4, 5))
		}()
	}
}

func BenchmarkSpMM(b *testing.B) {
	be := cpu.New(0)
	b.Run("200k/3.2M/w16", func(b *testing.B) { spmmtest.BenchSpMM(b, be, 200_000, 3_200_000, 16) })
	b.Run("200k/3.2M/w128", func(b *testing.B) { spmmtest.BenchSpMM(b, be, 200_000, 3_200_000, 128) })
}

func BenchmarkGemm(b *testing.B) {
	be := cpu.New(0)
	b.Run("NN/200kx128x128", func(b *testing.B) { spmmtest.BenchGemm(b, be, spmm.NoTrans, spmm.NoTrans, 200_000, 128, 128) })
	b.Run("TN/128x128x200k", func(b *testing.B) { spmmtest.BenchGemm(b, be, spmm.Trans, spmm.NoTrans, 128, 128, 200_000) })
	b.Run("NT/200kx128x128", func(b *testing.B) { spmmtest.BenchGemm(b, be, spmm.NoTrans, spmm.Trans, 200_000, 128, 128) })
}
