package spmmtest

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"scalegnn/spmm"
)

// TestBackend runs the conformance suite against b: SpMM and all four Gemm
// forms on empty, tiny, non-square, strided and power-law operands, shape
// panics, and concurrent use from several goroutines.
func TestBackend(t *testing.T, b spmm.Backend) {
	t.Run("SpMM", func(t *testing.T) { testSpMM(t, b) })
	t.Run("Gemm", func(t *testing.T) { testGemm(t, b) })
	t.Run("Panics", func(t *testing.T) { testPanics(t, b) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, b) })
}

// padded embeds an r×c view in a larger matrix of sentinel values, with
// extra columns on both sides and a spare row above, so the test can check
// that a kernel writes only inside the view. pad == 0 returns a tight r×c.
func padded(r, c, pad int, fill float32) (view, whole spmm.Dense) {
	whole = spmm.NewDense(r+pad, c+2*pad)
	for i := range whole.Data {
		whole.Data[i] = fill
	}
	return spmm.Slice(whole, pad, pad+r, pad, pad+c), whole
}

// sentinel is what padded fills dst with: any value a kernel could not
// produce by accident.
const sentinel = -12345.5

// checkDst compares view (inside whole) against want within bound and
// checks that every element of whole outside the view is still sentinel.
func checkDst(t *testing.T, name string, view, whole spmm.Dense, pad int, want, bound []float64) {
	t.Helper()
	bad := 0
	for i := 0; i < view.Rows; i++ {
		for j := 0; j < view.Cols; j++ {
			got := float64(view.Data[i*view.Stride+j])
			w, tol := want[i*view.Cols+j], bound[i*view.Cols+j]
			if !(math.Abs(got-w) <= tol+1e-30) {
				if bad++; bad <= 5 {
					t.Errorf("%s: (%d, %d) = %g, want %g ± %.3g", name, i, j, got, w, tol)
				}
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements wrong in all", name, bad)
	}
	if pad == 0 {
		return
	}
	for i := 0; i < whole.Rows; i++ {
		for j := 0; j < whole.Cols; j++ {
			inside := i >= pad && i < pad+view.Rows && j >= pad && j < pad+view.Cols
			if !inside && whole.Data[i*whole.Stride+j] != sentinel {
				t.Fatalf("%s: wrote outside dst at (%d, %d) of the padded matrix", name, i-pad, j-pad)
			}
		}
	}
}

type spmmCase struct {
	name    string
	a       *spmm.CSR
	width   int
	strideB int // 0: tight
	pad     int // dst padding, 0: tight
}

func spmmCases() []spmmCase {
	empty := func(r, c int) *spmm.CSR { return &spmm.CSR{Rows: r, Cols: c, RowPtr: make([]int64, r+1)} }
	// hub: one row holds most entries, surrounded by empty rows, so a
	// row-count split would be badly unbalanced.
	var ri, ci []int32
	for j := 0; j < 40; j++ {
		ri, ci = append(ri, 7), append(ci, int32(j))
	}
	ri, ci = append(ri, 0, 49), append(ci, 3, 39)
	hub := spmm.FromCOO(50, 40, ri, ci, nil)
	return []spmmCase{
		{name: "0x0", a: empty(0, 0), width: 4},
		{name: "0x5", a: empty(0, 5), width: 3},
		{name: "5x0", a: empty(5, 0), width: 3, pad: 1},
		{name: "width0", a: RandomCSR(6, 4, 0.5, 1), width: 0},
		{name: "no-entries", a: empty(4, 6), width: 5, pad: 2},
		{name: "1x1", a: FromDenseCSR(1, 1, []float32{-2.5}), width: 1},
		{name: "1x1-wide", a: FromDenseCSR(1, 1, []float32{0.5}), width: 37},
		{name: "non-square", a: RandomCSR(13, 29, 0.2, 2), width: 7},
		{name: "empty-rows", a: RandomCSR(40, 30, 0.03, 3), width: 9},
		{name: "hub", a: hub, width: 16, pad: 1},
		{name: "strided", a: RandomCSR(21, 17, 0.3, 4), width: 11, strideB: 15, pad: 3},
		{name: "odd-width", a: RandomCSR(30, 30, 0.2, 5), width: 67},
		{name: "wide", a: RandomCSR(9, 12, 0.4, 6), width: 300, strideB: 301, pad: 1},
		// Large enough for the backends to split rows over threads.
		{name: "power-law", a: PowerLawCSR(3000, 2500, 30000, 7), width: 33, strideB: 40, pad: 2},
		{name: "power-law-128", a: PowerLawCSR(2000, 2000, 20000, 8), width: 128},
	}
}

// FromDenseCSR builds a CSR from a row-major dense array, dropping zeros.
func FromDenseCSR(rows, cols int, v []float32) *spmm.CSR {
	a := &spmm.CSR{Rows: rows, Cols: cols, RowPtr: make([]int64, rows+1)}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if x := v[i*cols+j]; x != 0 {
				a.ColIdx = append(a.ColIdx, int32(j))
				a.Val = append(a.Val, x)
			}
		}
		a.RowPtr[i+1] = int64(len(a.ColIdx))
	}
	return a
}

func testSpMM(t *testing.T, be spmm.Backend) {
	for ci, c := range spmmCases() {
		t.Run(c.name, func(t *testing.T) {
			if err := c.a.Validate(); err != nil {
				t.Fatalf("bad test matrix: %v", err)
			}
			b := RandomDense(c.a.Cols, c.width, c.strideB, uint64(100+ci))
			dst, whole := padded(c.a.Rows, c.width, c.pad, sentinel)
			// dst starts as NaN inside the view: SpMM overwrites, never reads.
			for i := 0; i < dst.Rows; i++ {
				for j := range dst.Row(i) {
					dst.Row(i)[j] = float32(math.NaN())
				}
			}
			be.SpMM(dst, c.a, b)
			want, bound := refSpMM(c.a, b)
			checkDst(t, be.Name()+" SpMM", dst, whole, c.pad, want, bound)
		})
	}
}

func opName(t spmm.Op) string {
	if t == spmm.Trans {
		return "T"
	}
	return "N"
}

// operand returns an r×c matrix stored as op requires: for Trans the
// stored matrix is c×r. Odd seeds get a padded stride.
func operand(t spmm.Op, r, c int, seed uint64) spmm.Dense {
	if t == spmm.Trans {
		r, c = c, r
	}
	stride := c
	if seed%2 == 1 {
		stride = c + 3
	}
	return RandomDense(r, c, stride, seed)
}

func testGemm(t *testing.T, be spmm.Backend) {
	shapes := []struct{ m, n, k int }{
		{0, 0, 0}, {0, 3, 2}, {3, 0, 2}, {3, 2, 0}, {1, 1, 1},
		{5, 7, 3}, {17, 9, 33}, {2, 40, 1},
		{70, 48, 100}, // parallel split
		{1000, 16, 8}, // tall-skinny, like X·W
		{8, 12, 3000}, // long inner dimension, like Hᵀ·dZ
		// Wide outputs from a short inner dimension, split over rows (or
		// columns) of dst: a transposed operand then has fewer stored rows
		// than dst (CiteSeer's 3703 features over 3327 vertices).
		{600, 8, 40}, {8, 600, 40},
	}
	scalars := []struct{ alpha, beta float32 }{{1, 0}, {0.5, -1.5}, {0, 2}, {-2, 1}, {0, 0}}
	seed := uint64(1)
	for _, tA := range []spmm.Op{spmm.NoTrans, spmm.Trans} {
		for _, tB := range []spmm.Op{spmm.NoTrans, spmm.Trans} {
			for _, s := range shapes {
				for si, sc := range scalars {
					seed++
					name := fmt.Sprintf("%s%s/%dx%dx%d/alpha=%g,beta=%g", opName(tA), opName(tB), s.m, s.n, s.k, sc.alpha, sc.beta)
					a := operand(tA, s.m, s.k, seed)
					b := operand(tB, s.k, s.n, seed+1000)
					pad := si % 3 // tight and strided dst alike
					dst, whole := padded(s.m, s.n, pad, sentinel)
					init := RandomDense(s.m, s.n, 0, seed+2000)
					spmm.Copy(dst, init)
					if sc.beta == 0 {
						// BLAS semantics: with beta == 0, dst is not read.
						for i := 0; i < dst.Rows; i++ {
							for j := range dst.Row(i) {
								dst.Row(i)[j] = float32(math.NaN())
							}
						}
					}
					be.Gemm(tA, tB, sc.alpha, a, b, sc.beta, dst)
					want, bound := refGemm(tA, tB, sc.alpha, a, b, sc.beta, init)
					checkDst(t, be.Name()+" Gemm "+name, dst, whole, pad, want, bound)
				}
			}
		}
	}
}

// mustPanicShape fails t unless f panics with a spmm.ShapeError.
func mustPanicShape(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		err, ok := r.(error)
		var se spmm.ShapeError
		if !ok || !errors.As(err, &se) {
			t.Errorf("%s: panic %v, want a spmm.ShapeError", name, r)
		}
	}()
	f()
}

func testPanics(t *testing.T, be spmm.Backend) {
	a := RandomCSR(4, 5, 0.5, 1)
	nd := spmm.NewDense
	mustPanicShape(t, "SpMM b rows", func() { be.SpMM(nd(4, 3), a, nd(4, 3)) })
	mustPanicShape(t, "SpMM dst rows", func() { be.SpMM(nd(5, 3), a, nd(5, 3)) })
	mustPanicShape(t, "SpMM dst cols", func() { be.SpMM(nd(4, 2), a, nd(5, 3)) })
	mustPanicShape(t, "SpMM row pointers", func() {
		bad := *a
		bad.RowPtr = bad.RowPtr[:3]
		be.SpMM(nd(4, 3), &bad, nd(5, 3))
	})
	short := nd(5, 3)
	short.Data = short.Data[:14]
	mustPanicShape(t, "SpMM short b", func() { be.SpMM(nd(4, 3), a, short) })
	narrow := nd(4, 3)
	narrow.Stride = 2
	mustPanicShape(t, "SpMM stride < cols", func() { be.SpMM(narrow, a, nd(5, 3)) })

	for _, tA := range []spmm.Op{spmm.NoTrans, spmm.Trans} {
		for _, tB := range []spmm.Op{spmm.NoTrans, spmm.Trans} {
			name := "Gemm " + opName(tA) + opName(tB)
			a := operand(tA, 3, 4, 2)
			b := operand(tB, 5, 2, 2) // inner dimension 5 ≠ 4
			mustPanicShape(t, name+" inner", func() { be.Gemm(tA, tB, 1, a, b, 0, nd(3, 2)) })
			b = operand(tB, 4, 2, 2)
			mustPanicShape(t, name+" dst", func() { be.Gemm(tA, tB, 1, a, b, 0, nd(2, 3)) })
			short := nd(3, 2)
			short.Data = short.Data[:5]
			mustPanicShape(t, name+" short dst", func() { be.Gemm(tA, tB, 1, a, b, 0, short) })
		}
	}
}

// testConcurrent checks that one backend value serves several goroutines at
// once (layers overlap an SpMM with a GEMM), and under -race that its
// internal splitting does not share state.
func testConcurrent(t *testing.T, be spmm.Backend) {
	a := PowerLawCSR(1500, 1200, 15000, 9)
	b := RandomDense(1200, 24, 0, 10)
	wantS, boundS := refSpMM(a, b)
	x := RandomDense(500, 32, 0, 11)
	w := RandomDense(32, 20, 0, 12)
	zero := spmm.NewDense(500, 20)
	wantG, boundG := refGemm(spmm.NoTrans, spmm.NoTrans, 1, x, w, 0, zero)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				if g%2 == 0 {
					dst := spmm.NewDense(a.Rows, b.Cols)
					be.SpMM(dst, a, b)
					checkDst(t, be.Name()+" concurrent SpMM", dst, dst, 0, wantS, boundS)
				} else {
					dst := spmm.NewDense(500, 20)
					be.Gemm(spmm.NoTrans, spmm.NoTrans, 1, x, w, 0, dst)
					checkDst(t, be.Name()+" concurrent Gemm", dst, dst, 0, wantG, boundG)
				}
			}
		}()
	}
	wg.Wait()
}
