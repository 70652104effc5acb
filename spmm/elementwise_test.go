package spmm_test

import (
	"errors"
	"testing"

	"scalegnn/spmm"
	"scalegnn/spmm/spmmtest"
)

// denseOf returns a tight r×c matrix holding v row-major.
func denseOf(r, c int, v ...float32) spmm.Dense {
	return spmm.Dense{Rows: r, Cols: c, Stride: c, Data: v}
}

func equal(t *testing.T, name string, got spmm.Dense, want []float32) {
	t.Helper()
	for i := 0; i < got.Rows; i++ {
		for j := 0; j < got.Cols; j++ {
			if g, w := got.At(i, j), want[i*got.Cols+j]; g != w {
				t.Errorf("%s: (%d, %d) = %g, want %g", name, i, j, g, w)
			}
		}
	}
}

func mustShapePanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		err, ok := r.(error)
		var se spmm.ShapeError
		if !ok || !errors.As(err, &se) {
			t.Errorf("%s: panic %v, want a ShapeError", name, r)
		}
	}()
	f()
}

func TestSlice(t *testing.T) {
	d := denseOf(3, 4,
		0, 1, 2, 3,
		4, 5, 6, 7,
		8, 9, 10, 11)
	v := spmm.Slice(d, 1, 3, 1, 3)
	if v.Rows != 2 || v.Cols != 2 || v.Stride != 4 {
		t.Fatalf("view %d×%d stride %d", v.Rows, v.Cols, v.Stride)
	}
	equal(t, "Slice", v, []float32{5, 6, 9, 10})
	if len(v.Data) != cap(v.Data) {
		t.Errorf("view Data not capped: len %d cap %d", len(v.Data), cap(v.Data))
	}
	v.Set(0, 1, -1)
	if d.At(1, 2) != -1 {
		t.Errorf("write through view not visible in parent")
	}
	for _, e := range [][4]int{{0, 0, 0, 0}, {3, 3, 0, 4}, {0, 3, 4, 4}} {
		if v := spmm.Slice(d, e[0], e[1], e[2], e[3]); v.Rows != e[1]-e[0] || v.Cols != e[3]-e[2] {
			t.Errorf("empty slice %v: %d×%d", e, v.Rows, v.Cols)
		}
	}
	for _, e := range [][4]int{{-1, 1, 0, 1}, {0, 4, 0, 1}, {2, 1, 0, 1}, {0, 1, 3, 5}, {0, 1, 2, 1}} {
		mustShapePanic(t, "Slice out of range", func() { spmm.Slice(d, e[0], e[1], e[2], e[3]) })
	}
}

func TestElementwise(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{10, 20, 30, 40, 50, 60}
	// Every operation runs on tight matrices and on strided views (the
	// middle columns of a 2×5 matrix of sentinels) and must agree.
	view := func(v []float32) (spmm.Dense, spmm.Dense) {
		whole := spmm.NewDense(2, 5)
		for i := range whole.Data {
			whole.Data[i] = -7
		}
		s := spmm.Slice(whole, 0, 2, 1, 4)
		spmm.Copy(s, denseOf(2, 3, v...))
		return s, whole
	}
	for _, strided := range []bool{false, true} {
		mk := func(v []float32) spmm.Dense {
			if strided {
				s, _ := view(v)
				return s
			}
			return denseOf(2, 3, append([]float32(nil), v...)...)
		}
		dst := mk(make([]float32, 6))
		spmm.Add(dst, mk(a), mk(b))
		equal(t, "Add", dst, []float32{11, 22, 33, 44, 55, 66})

		x := mk(a)
		spmm.Add(x, x, mk(b)) // dst aliases a
		equal(t, "Add aliased", x, []float32{11, 22, 33, 44, 55, 66})

		x = mk(a)
		spmm.AddTo(x, mk(b))
		equal(t, "AddTo", x, []float32{11, 22, 33, 44, 55, 66})

		x = mk(a)
		spmm.AddScaled(x, -2, mk(b))
		equal(t, "AddScaled", x, []float32{-19, -38, -57, -76, -95, -114})

		x = mk(a)
		spmm.Scale(x, 0.5, x)
		equal(t, "Scale in place", x, []float32{0.5, 1, 1.5, 2, 2.5, 3})

		spmm.Zero(x)
		equal(t, "Zero", x, make([]float32, 6))

		spmm.Copy(x, mk(b))
		equal(t, "Copy", x, b)
	}

	// Strided writes must leave the columns outside the view alone.
	s, whole := view(a)
	spmm.Zero(s)
	spmm.Scale(s, 3, s)
	spmm.AddTo(s, s)
	for i := 0; i < 2; i++ {
		if whole.At(i, 0) != -7 || whole.At(i, 4) != -7 {
			t.Errorf("row %d: wrote outside the view: %v", i, whole.Row(i))
		}
	}

	// Empty shapes are no-ops, with or without Data.
	for _, e := range []spmm.Dense{{}, {Rows: 3}, {Cols: 3, Stride: 3}} {
		spmm.Add(e, e, e)
		spmm.AddTo(e, e)
		spmm.AddScaled(e, 2, e)
		spmm.Scale(e, 2, e)
		spmm.Zero(e)
		spmm.Copy(e, e)
	}

	mustShapePanic(t, "Add shapes", func() { spmm.Add(spmm.NewDense(2, 3), spmm.NewDense(2, 3), spmm.NewDense(3, 2)) })
	mustShapePanic(t, "Copy shapes", func() { spmm.Copy(spmm.NewDense(2, 3), spmm.NewDense(2, 2)) })
	mustShapePanic(t, "AddTo short data", func() {
		spmm.AddTo(spmm.Dense{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 5)}, spmm.NewDense(2, 3))
	})
	mustShapePanic(t, "At outside", func() { spmm.NewDense(2, 3).At(2, 0) })
	mustShapePanic(t, "Row outside", func() { spmm.NewDense(2, 3).Row(-1) })
}

func TestPartitionRows(t *testing.T) {
	a := spmmtest.PowerLawCSR(5000, 5000, 80000, 1)
	for _, parts := range []int{1, 2, 3, 7, 64} {
		bounds := spmm.PartitionRows(a, parts)
		if len(bounds) != parts+1 || bounds[0] != 0 || bounds[parts] != a.Rows {
			t.Fatalf("parts %d: bounds %v", parts, bounds)
		}
		total := float64(a.NNZ() + a.Rows)
		var maxRow int64
		for i := 0; i < a.Rows; i++ {
			maxRow = max(maxRow, a.RowPtr[i+1]-a.RowPtr[i]+1)
		}
		for p := 0; p < parts; p++ {
			lo, hi := bounds[p], bounds[p+1]
			if hi < lo {
				t.Fatalf("parts %d: decreasing bounds %v", parts, bounds)
			}
			// Each share is within one row's cost of the ideal.
			cost := float64(a.RowPtr[hi] - a.RowPtr[lo] + int64(hi-lo))
			if cost > total/float64(parts)+float64(maxRow) {
				t.Errorf("parts %d: range %d costs %g, ideal %g, largest row %d", parts, p, cost, total/float64(parts), maxRow)
			}
		}
	}
	empty := &spmm.CSR{RowPtr: []int64{0}}
	if b := spmm.PartitionRows(empty, 4); len(b) != 5 || b[4] != 0 {
		t.Errorf("empty matrix: %v", b)
	}
	if b := spmm.PartitionRows(a, 0); len(b) != 2 || b[1] != a.Rows {
		t.Errorf("parts 0: %v", b)
	}
}
