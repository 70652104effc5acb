package spmm

// Element-wise operations on Dense views. Each walks the operands row by row
// so that strided views (column blocks from Slice) work; when every operand
// is contiguous the rows are fused into one flat loop. An output may be the
// very same view as an input (dst == a), never a partially overlapping one.

// Add computes dst = a + b. dst may be a or b.
func Add(dst, a, b Dense) {
	checkSame("Add", dst, a)
	checkSame("Add", dst, b)
	rowsDo3(dst, a, b, func(d, x, y []float32) {
		y = y[:len(d)]
		x = x[:len(d)]
		for j := range d {
			d[j] = x[j] + y[j]
		}
	})
}

// AddTo computes dst += a.
func AddTo(dst, a Dense) {
	checkSame("AddTo", dst, a)
	rowsDo2(dst, a, func(d, x []float32) {
		x = x[:len(d)]
		for j := range d {
			d[j] += x[j]
		}
	})
}

// AddScaled computes dst += alpha·a (an axpy), the update of an SGD step or
// of a gradient accumulation.
func AddScaled(dst Dense, alpha float32, a Dense) {
	checkSame("AddScaled", dst, a)
	rowsDo2(dst, a, func(d, x []float32) {
		x = x[:len(d)]
		for j := range d {
			d[j] += alpha * x[j]
		}
	})
}

// Scale computes dst = alpha·a. dst may be a.
func Scale(dst Dense, alpha float32, a Dense) {
	checkSame("Scale", dst, a)
	rowsDo2(dst, a, func(d, x []float32) {
		x = x[:len(d)]
		for j := range d {
			d[j] = alpha * x[j]
		}
	})
}

// Zero sets every element of d to zero, leaving the gaps between strided
// rows untouched.
func Zero(d Dense) {
	d.Check("Zero")
	rowsDo1(d, func(r []float32) { clear(r) })
}

// Copy copies src into dst; both must have the same shape and must not
// overlap unless they are the same view.
func Copy(dst, src Dense) {
	checkSame("Copy", dst, src)
	rowsDo2(dst, src, func(d, s []float32) { copy(d, s) })
}

// Slice returns the view of rows [r0, r1) and columns [c0, c1) of d. It
// shares d's storage and stride, so writes through it change d. The view's
// Data is capped at its last element so an append cannot clobber d.
func Slice(d Dense, r0, r1, c0, c1 int) Dense {
	return Dense{Rows: r1 - r0, Cols: c1 - c0, Stride: d.Stride, Data: sliceData("Slice", d.Data, d.Rows, d.Cols, d.Stride, r0, r1, c0, c1)}
}

// sliceData returns the part of a rows×cols view's data (with the given
// stride) that rows [r0, r1) and columns [c0, c1) span, nil when that is
// empty, and panics with a ShapeError when the ranges fall outside it.
func sliceData[T any](name string, data []T, rows, cols, stride, r0, r1, c0, c1 int) []T {
	if r0 < 0 || r1 < r0 || r1 > rows || c0 < 0 || c1 < c0 || c1 > cols {
		shapePanic("%s [%d:%d, %d:%d] of %d×%d", name, r0, r1, c0, c1, rows, cols)
	}
	if r1 == r0 || c1 == c0 {
		return nil
	}
	lo, hi := r0*stride+c0, (r1-1)*stride+c1
	return data[lo:hi:hi]
}

func rowsDo1(d Dense, f func(d []float32)) {
	if d.Rows == 0 || d.Cols == 0 {
		return
	}
	if d.contiguous() {
		f(d.Data[:d.Rows*d.Cols])
		return
	}
	for i := 0; i < d.Rows; i++ {
		f(d.Row(i))
	}
}

func rowsDo2(d, a Dense, f func(d, a []float32)) {
	if d.Rows == 0 || d.Cols == 0 {
		return
	}
	if d.contiguous() && a.contiguous() {
		n := d.Rows * d.Cols
		f(d.Data[:n], a.Data[:n])
		return
	}
	for i := 0; i < d.Rows; i++ {
		f(d.Row(i), a.Row(i))
	}
}

func rowsDo3(d, a, b Dense, f func(d, a, b []float32)) {
	if d.Rows == 0 || d.Cols == 0 {
		return
	}
	if d.contiguous() && a.contiguous() && b.contiguous() {
		n := d.Rows * d.Cols
		f(d.Data[:n], a.Data[:n], b.Data[:n])
		return
	}
	for i := 0; i < d.Rows; i++ {
		f(d.Row(i), a.Row(i), b.Row(i))
	}
}
