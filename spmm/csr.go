package spmm

import (
	"fmt"
	"sort"
)

// ShapeError is the panic value for operands whose shapes do not agree.
type ShapeError string

func (e ShapeError) Error() string { return "spmm: shape mismatch: " + string(e) }

func shapePanic(format string, args ...any) { panic(ShapeError(fmt.Sprintf(format, args...))) }

// FromCOO builds a rows×cols CSR matrix from coordinate triplets. Entries
// with the same (row, col) are summed; vals may be nil for all-ones.
// Indices out of range are a programmer error (callers validate input data
// first) and panic.
func FromCOO(rows, cols int, ri, ci []int32, vals []float32) *CSR {
	if len(ri) != len(ci) || (vals != nil && len(vals) != len(ri)) {
		shapePanic("FromCOO: %d rows, %d cols, %d vals", len(ri), len(ci), len(vals))
	}
	a := &CSR{Rows: rows, Cols: cols, RowPtr: make([]int64, rows+1)}
	for k, r := range ri {
		if int(r) < 0 || int(r) >= rows || int(ci[k]) < 0 || int(ci[k]) >= cols {
			shapePanic("FromCOO: entry (%d, %d) outside %d×%d", r, ci[k], rows, cols)
		}
		a.RowPtr[r+1]++
	}
	for i := 0; i < rows; i++ {
		a.RowPtr[i+1] += a.RowPtr[i]
	}
	col := make([]int32, len(ri))
	val := make([]float32, len(ri))
	next := append([]int64(nil), a.RowPtr[:rows]...)
	for k, r := range ri {
		p := next[r]
		next[r]++
		col[p] = ci[k]
		if vals == nil {
			val[p] = 1
		} else {
			val[p] = vals[k]
		}
	}
	// Sort each row and merge duplicates, compacting in place.
	var w int64
	for i := 0; i < rows; i++ {
		lo, hi := a.RowPtr[i], a.RowPtr[i+1]
		sort.Sort(rowSorter{col[lo:hi], val[lo:hi]})
		a.RowPtr[i] = w
		for p := lo; p < hi; p++ {
			if p > lo && col[p] == col[p-1] {
				val[w-1] += val[p]
				continue
			}
			col[w], val[w] = col[p], val[p]
			w++
		}
	}
	a.RowPtr[rows] = w
	a.ColIdx = col[:w:w]
	a.Val = val[:w:w]
	return a
}

type rowSorter struct {
	c []int32
	v []float32
}

func (s rowSorter) Len() int           { return len(s.c) }
func (s rowSorter) Less(i, j int) bool { return s.c[i] < s.c[j] }
func (s rowSorter) Swap(i, j int) {
	s.c[i], s.c[j] = s.c[j], s.c[i]
	s.v[i], s.v[j] = s.v[j], s.v[i]
}

// Validate checks the structural invariants of a (pointer monotonicity,
// sorted unique in-range columns). Loaders call it on data from files.
func (a *CSR) Validate() error {
	if len(a.RowPtr) != a.Rows+1 || a.RowPtr[0] != 0 {
		return fmt.Errorf("csr: %d row pointers for %d rows", len(a.RowPtr), a.Rows)
	}
	nnz := a.RowPtr[a.Rows]
	if int64(len(a.ColIdx)) < nnz || int64(len(a.Val)) < nnz {
		return fmt.Errorf("csr: %d nonzeros but %d columns, %d values", nnz, len(a.ColIdx), len(a.Val))
	}
	for i := 0; i < a.Rows; i++ {
		lo, hi := a.RowPtr[i], a.RowPtr[i+1]
		if hi < lo {
			return fmt.Errorf("csr: row %d has negative length", i)
		}
		for p := lo; p < hi; p++ {
			c := a.ColIdx[p]
			if c < 0 || int(c) >= a.Cols {
				return fmt.Errorf("csr: row %d column %d outside [0, %d)", i, c, a.Cols)
			}
			if p > lo && c <= a.ColIdx[p-1] {
				return fmt.Errorf("csr: row %d columns not sorted and unique at %d", i, c)
			}
		}
	}
	return nil
}
