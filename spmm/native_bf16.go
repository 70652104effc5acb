package spmm

// The bfloat16 products of Native, in pure Go: the counterparts of
// spmm/cpu's SpMMBF16, SpMMBF16ToBF16 and GemmBF16, with the same
// semantics (float32 sums; see bf16.go for the rounding).

// SpMMBF16 computes dst = a·b for a bfloat16 b, overwriting dst: SpMM's
// split over goroutines and order of summation, each element of b
// widened as it is read, so the result is SpMM's on b widened to float32,
// bit for bit.
func (nt *Native) SpMMBF16(dst Dense, a *CSR, b DenseBF16) {
	CheckSpMMBF16(dst, a, b)
	nt.spmmRanges(a, b.Cols, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			spmmRowBF16(dst.Row(i), a, b, i)
		}
	})
}

// SpMMBF16ToBF16 is SpMMBF16 into a bfloat16 dst: each float32 sum is
// rounded once (ToBF16) when it is complete.
func (nt *Native) SpMMBF16ToBF16(dst DenseBF16, a *CSR, b DenseBF16) {
	CheckSpMMBF16(dst, a, b)
	nt.spmmRanges(a, b.Cols, func(lo, hi int) {
		sum := make([]float32, b.Cols)
		for i := lo; i < hi; i++ {
			spmmRowBF16(sum, a, b, i)
			d := dst.Data[i*dst.Stride : i*dst.Stride+dst.Cols]
			for j, v := range sum {
				d[j] = ToBF16(v)
			}
		}
	})
}

// SpMMBF16ToBF16Masked is SpMMBF16ToBF16 with each float32 sum masked
// and scaled before it is rounded (MaskedBF16: keep and pos are rows of
// MaskWords(cols) words): a dropout's and a ReLU's gradients fused into
// the product, so that the float32 result is never stored.
func (nt *Native) SpMMBF16ToBF16Masked(dst DenseBF16, a *CSR, b DenseBF16, keep, pos []uint64, scale float32) {
	CheckSpMMBF16Masked(dst, a, b, keep, pos)
	wpr := MaskWords(b.Cols)
	nt.spmmRanges(a, b.Cols, func(lo, hi int) {
		sum := make([]float32, b.Cols)
		for i := lo; i < hi; i++ {
			spmmRowBF16(sum, a, b, i)
			d := dst.Data[i*dst.Stride : i*dst.Stride+dst.Cols]
			k, q := keep[i*wpr:(i+1)*wpr], pos[i*wpr:(i+1)*wpr]
			for j, v := range sum {
				d[j] = MaskedBF16(v, k[j>>6]>>(j&63)&1 != 0, q[j>>6]>>(j&63)&1 != 0, scale)
			}
		}
	})
}

// spmmRanges runs fn over ranges of a's rows balanced by nonzeros, on
// up to nt's goroutines when the product of cols columns is worth it.
func (nt *Native) spmmRanges(a *CSR, cols int, fn func(lo, hi int)) {
	if a.Rows == 0 || cols == 0 {
		return
	}
	parts := workers(nt.threads)
	if float64(a.NNZ())*float64(cols) < minParallelWork {
		parts = 1
	}
	parallelRanges(PartitionRows(a, parts), fn)
}

// spmmRowBF16 sets d to row i of a·b, summing as spmmRows does.
func spmmRowBF16(d []float32, a *CSR, b DenseBF16, i int) {
	clear(d)
	n := len(d)
	lo, hi := a.RowPtr[i], a.RowPtr[i+1]
	cols, vals := a.ColIdx[lo:hi], a.Val[lo:hi]
	vals = vals[:len(cols)]
	for p, c := range cols {
		off := int(c) * b.Stride
		s, x := vals[p], b.Data[off:off+n]
		for j := range d {
			d[j] += s * FromBF16(x[j])
		}
	}
}

// GemmBF16 computes dst = alpha·op(a)·op(b) + beta·dst for bfloat16 a and
// b with float32 sums: Gemm on the operands widened to float32 (exactly),
// so the products are of the same values as a bfloat16 kernel's.
func (nt *Native) GemmBF16(tA, tB Op, alpha float32, a, b DenseBF16, beta float32, dst Dense) {
	CheckGemmBF16(tA, tB, a, b, dst)
	nt.Gemm(tA, tB, alpha, widenDense(a), widenDense(b), beta, dst)
}

// widenDense returns a new float32 copy of h.
func widenDense(h DenseBF16) Dense {
	d := NewDense(h.Rows, h.Cols)
	DecodeBF16(d, h)
	return d
}
