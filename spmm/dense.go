package spmm

// This file holds the Dense accessors and the shape checks every backend
// shares, so that a misuse panics with the same ShapeError whichever
// backend is selected.

// Row returns row i of d as a slice of length d.Cols that aliases d.Data.
func (d Dense) Row(i int) []float32 {
	if uint(i) >= uint(d.Rows) {
		shapePanic("Row(%d) outside %d rows", i, d.Rows)
	}
	if d.Cols == 0 {
		return nil // a view with no columns may have no Data at all
	}
	off := i * d.Stride
	return d.Data[off : off+d.Cols : off+d.Cols]
}

// At returns element (i, j) of d.
func (d Dense) At(i, j int) float32 {
	if uint(i) >= uint(d.Rows) || uint(j) >= uint(d.Cols) {
		shapePanic("At(%d, %d) outside %d×%d", i, j, d.Rows, d.Cols)
	}
	return d.Data[i*d.Stride+j]
}

// Set sets element (i, j) of d to v.
func (d Dense) Set(i, j int, v float32) {
	if uint(i) >= uint(d.Rows) || uint(j) >= uint(d.Cols) {
		shapePanic("Set(%d, %d) outside %d×%d", i, j, d.Rows, d.Cols)
	}
	d.Data[i*d.Stride+j] = v
}

// Check panics with a ShapeError unless d is a well-formed view: non-negative
// dimensions, Stride >= Cols and Data long enough to hold every element.
// Backends that hand Data to foreign code call it first, because C would
// read or write past the slice instead of panicking.
func (d Dense) Check(name string) { checkView(name, d.Rows, d.Cols, d.Stride, len(d.Data)) }

// checkView is Check for a view of any element type: rows×cols with the
// given stride over n elements.
func checkView(name string, rows, cols, stride, n int) {
	if rows < 0 || cols < 0 || stride < cols {
		shapePanic("%s: %d×%d with stride %d", name, rows, cols, stride)
	}
	if rows > 0 && cols > 0 && n < (rows-1)*stride+cols {
		shapePanic("%s: %d×%d with stride %d needs %d elements, have %d",
			name, rows, cols, stride, (rows-1)*stride+cols, n)
	}
}

// contiguous reports whether d's elements are Data[:Rows*Cols] with no gaps,
// so element-wise loops can run over one flat slice.
func (d Dense) contiguous() bool { return d.Stride == d.Cols || d.Rows <= 1 }

// CheckSpMM panics with a ShapeError unless dst = a·b is well formed:
// dst is a.Rows×b.Cols and b has a.Cols rows. It also checks the CSR's
// row pointer length, which every kernel indexes without further checks.
func CheckSpMM(dst Dense, a *CSR, b Dense) {
	dst.Check("SpMM dst")
	b.Check("SpMM b")
	checkSpMMShapes(dst.Rows, dst.Cols, a, b.Rows, b.Cols)
}

// checkSpMMShapes checks the CSR and the dimensions of dst = a·b, whatever
// the element types of the dense views.
func checkSpMMShapes(dstRows, dstCols int, a *CSR, bRows, bCols int) {
	if a.Rows < 0 || a.Cols < 0 || len(a.RowPtr) != a.Rows+1 {
		shapePanic("SpMM: CSR %d×%d with %d row pointers", a.Rows, a.Cols, len(a.RowPtr))
	}
	if bRows != a.Cols || dstRows != a.Rows || dstCols != bCols {
		shapePanic("SpMM: dst %d×%d = a %d×%d · b %d×%d",
			dstRows, dstCols, a.Rows, a.Cols, bRows, bCols)
	}
}

// CheckGemm panics with a ShapeError unless dst = op(a)·op(b) is well
// formed, and returns the product's dimensions: op(a) is m×k, op(b) is k×n.
func CheckGemm(tA, tB Op, a, b, dst Dense) (m, n, k int) {
	a.Check("Gemm a")
	b.Check("Gemm b")
	dst.Check("Gemm dst")
	return checkGemmShapes(tA, tB, a.Rows, a.Cols, b.Rows, b.Cols, dst.Rows, dst.Cols)
}

// checkGemmShapes checks the dimensions of dst = op(a)·op(b), whatever the
// element types of the views, and returns m, n, k.
func checkGemmShapes(tA, tB Op, aRows, aCols, bRows, bCols, dstRows, dstCols int) (m, n, k int) {
	m, k = aRows, aCols
	if tA == Trans {
		m, k = k, m
	}
	kb, n := bRows, bCols
	if tB == Trans {
		kb, n = n, kb
	}
	if k != kb || dstRows != m || dstCols != n {
		shapePanic("Gemm: dst %d×%d = op(a) %d×%d · op(b) %d×%d",
			dstRows, dstCols, m, k, kb, n)
	}
	return m, n, k
}

func checkSame(name string, dst, a Dense) {
	dst.Check(name + " dst")
	a.Check(name + " operand")
	if dst.Rows != a.Rows || dst.Cols != a.Cols {
		shapePanic("%s: dst %d×%d, operand %d×%d", name, dst.Rows, dst.Cols, a.Rows, a.Cols)
	}
}
