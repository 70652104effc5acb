package spmm_test

import (
	"slices"
	"testing"

	"scalegnn/spmm"
	"scalegnn/spmm/spmmtest"
)

func TestFromCOO(t *testing.T) {
	// Unsorted input with a duplicate (1, 2) that must be summed, an empty
	// row 2 and an explicit value list.
	a := spmm.FromCOO(4, 3,
		[]int32{1, 0, 1, 3, 1},
		[]int32{2, 1, 0, 0, 2},
		[]float32{1, 2, 3, 4, 5})
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if want := []int64{0, 1, 3, 3, 4}; !slices.Equal(a.RowPtr, want) {
		t.Errorf("RowPtr %v, want %v", a.RowPtr, want)
	}
	if want := []int32{1, 0, 2, 0}; !slices.Equal(a.ColIdx, want) {
		t.Errorf("ColIdx %v, want %v", a.ColIdx, want)
	}
	if want := []float32{2, 3, 6, 4}; !slices.Equal(a.Val, want) {
		t.Errorf("Val %v, want %v", a.Val, want)
	}
	ones := spmm.FromCOO(2, 2, []int32{0, 1}, []int32{1, 0}, nil)
	if !slices.Equal(ones.Val, []float32{1, 1}) {
		t.Errorf("nil vals: %v", ones.Val)
	}
	if e := spmm.FromCOO(0, 0, nil, nil, nil); e.NNZ() != 0 || e.Validate() != nil {
		t.Errorf("empty FromCOO: %+v", e)
	}
	mustShapePanic(t, "FromCOO out of range", func() { spmm.FromCOO(2, 2, []int32{2}, []int32{0}, nil) })
	mustShapePanic(t, "FromCOO lengths", func() { spmm.FromCOO(2, 2, []int32{0, 1}, []int32{0}, nil) })
}

func TestTranspose(t *testing.T) {
	for _, c := range []struct{ r, c int }{{0, 0}, {0, 4}, {3, 0}, {1, 1}, {17, 40}, {60, 9}} {
		a := spmmtest.RandomCSR(c.r, c.c, 0.2, uint64(c.r*100+c.c))
		at := spmm.Transpose(a)
		if err := at.Validate(); err != nil {
			t.Fatalf("%d×%d: %v", c.r, c.c, err)
		}
		if at.Rows != a.Cols || at.Cols != a.Rows || at.NNZ() != a.NNZ() {
			t.Fatalf("%d×%d: transpose is %d×%d with %d entries", c.r, c.c, at.Rows, at.Cols, at.NNZ())
		}
		dense := func(m *spmm.CSR) []float32 {
			d := make([]float32, m.Rows*m.Cols)
			for i := 0; i < m.Rows; i++ {
				for p := m.RowPtr[i]; p < m.RowPtr[i+1]; p++ {
					d[i*m.Cols+int(m.ColIdx[p])] = m.Val[p]
				}
			}
			return d
		}
		da, dt := dense(a), dense(at)
		for i := 0; i < a.Rows; i++ {
			for j := 0; j < a.Cols; j++ {
				if da[i*a.Cols+j] != dt[j*a.Rows+i] {
					t.Fatalf("%d×%d: aᵀ(%d, %d) wrong", c.r, c.c, j, i)
				}
			}
		}
		if back := spmm.Transpose(at); !slices.Equal(back.RowPtr, a.RowPtr) || !slices.Equal(back.ColIdx, a.ColIdx) || !slices.Equal(back.Val, a.Val) {
			t.Errorf("%d×%d: (aᵀ)ᵀ ≠ a", c.r, c.c)
		}
	}
}

func TestValidate(t *testing.T) {
	good := func() *spmm.CSR {
		return &spmm.CSR{Rows: 2, Cols: 3, RowPtr: []int64{0, 2, 3}, ColIdx: []int32{0, 2, 1}, Val: []float32{1, 2, 3}}
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("valid matrix: %v", err)
	}
	for name, breakIt := range map[string]func(a *spmm.CSR){
		"short RowPtr":    func(a *spmm.CSR) { a.RowPtr = a.RowPtr[:2] },
		"RowPtr[0] != 0":  func(a *spmm.CSR) { a.RowPtr[0] = 1 },
		"decreasing":      func(a *spmm.CSR) { a.RowPtr[1] = 3; a.RowPtr[2] = 2 },
		"too few values":  func(a *spmm.CSR) { a.Val = a.Val[:2] },
		"column too big":  func(a *spmm.CSR) { a.ColIdx[1] = 3 },
		"negative column": func(a *spmm.CSR) { a.ColIdx[0] = -1 },
		"unsorted":        func(a *spmm.CSR) { a.ColIdx[0], a.ColIdx[1] = 2, 0 },
		"duplicate":       func(a *spmm.CSR) { a.ColIdx[1] = 0 },
	} {
		a := good()
		breakIt(a)
		if a.Validate() == nil {
			t.Errorf("%s: Validate accepted %+v", name, a)
		}
	}
}
