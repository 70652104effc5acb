package spmm

// Native is the pure-Go Backend: the reference the fast backends are tested
// against and the fallback where cgo is unavailable. Products are split
// over goroutines by output rows (by nonzeros for SpMM). The zero value is
// ready to use with GOMAXPROCS threads.
type Native struct {
	threads int
}

var _ Backend = (*Native)(nil)

// NewNative returns a Native backend that uses up to threads goroutines per
// product; threads <= 0 means runtime.GOMAXPROCS(0) at call time.
func NewNative(threads int) *Native { return &Native{threads: threads} }

// Name returns "native".
func (nt *Native) Name() string { return "native" }

// SpMM computes dst = a·b, overwriting dst.
func (nt *Native) SpMM(dst Dense, a *CSR, b Dense) {
	CheckSpMM(dst, a, b)
	nt.spmmRanges(a, b.Cols, func(lo, hi int) { spmmRows(dst, a, b, lo, hi) })
}

// spmmRows computes rows [r0, r1) of dst = a·b: each output row is a sum
// of the rows of b picked by the row's column indices, scaled by its values.
func spmmRows(dst Dense, a *CSR, b Dense, r0, r1 int) {
	n := b.Cols
	for i := r0; i < r1; i++ {
		d := dst.Row(i)
		clear(d)
		lo, hi := a.RowPtr[i], a.RowPtr[i+1]
		cols, vals := a.ColIdx[lo:hi], a.Val[lo:hi]
		vals = vals[:len(cols)]
		for p, c := range cols {
			off := int(c) * b.Stride
			axpy(d, vals[p], b.Data[off:off+n])
		}
	}
}

// axpy computes d += s·x over len(d) elements, unrolled by four so the
// compiler keeps the bounds checks out of the loop body.
func axpy(d []float32, s float32, x []float32) {
	x = x[:len(d)]
	j := 0
	for ; j+4 <= len(d); j += 4 {
		dd := d[j : j+4 : j+4]
		xx := x[j : j+4 : j+4]
		dd[0] += s * xx[0]
		dd[1] += s * xx[1]
		dd[2] += s * xx[2]
		dd[3] += s * xx[3]
	}
	for ; j < len(d); j++ {
		d[j] += s * x[j]
	}
}

// scaleRow computes d = beta·d; beta == 0 writes zeros without reading d,
// as BLAS does, so a NaN in an uninitialised dst does not survive.
func scaleRow(d []float32, beta float32) {
	switch beta {
	case 1:
	case 0:
		clear(d)
	default:
		for j := range d {
			d[j] *= beta
		}
	}
}
