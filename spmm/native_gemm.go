package spmm

// Gemm computes dst = alpha·op(a)·op(b) + beta·dst with BLAS semantics:
// beta == 0 overwrites dst without reading it, and alpha == 0 or an empty
// inner dimension only scales dst. The four transpose combinations have
// their own loops, each parallel over rows of dst, chosen so the innermost
// loop runs along contiguous memory.
func (nt *Native) Gemm(tA, tB Op, alpha float32, a, b Dense, beta float32, dst Dense) {
	m, n, k := CheckGemm(tA, tB, a, b, dst)
	if m == 0 || n == 0 {
		return
	}
	parts := workers(nt.threads)
	if float64(m)*float64(n)*float64(k) < minParallelWork {
		parts = 1
	}
	bounds := evenBounds(m, parts)
	if alpha == 0 || k == 0 {
		parallelRanges(bounds, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				scaleRow(dst.Row(i), beta)
			}
		})
		return
	}
	if tA == Trans && tB == Trans {
		// (aᵀ)(bᵀ): materialise aᵀ once so that each element of dst is a
		// contiguous dot product, as in the NT case. This form is rare.
		at := NewDense(m, k)
		for l := 0; l < k; l++ {
			for i, v := range a.Row(l) {
				at.Data[i*k+l] = v
			}
		}
		a, tA = at, NoTrans
	}
	var rows func(lo, hi int)
	switch {
	case tA == NoTrans && tB == NoTrans:
		// dst_i = beta·dst_i + Σ_l alpha·a_il · b_l: axpys over rows of b.
		rows = func(lo, hi int) {
			for i := lo; i < hi; i++ {
				d := dst.Row(i)
				scaleRow(d, beta)
				for l, v := range a.Row(i) {
					axpy(d, alpha*v, b.Row(l))
				}
			}
		}
	case tA == NoTrans && tB == Trans:
		// dst_ij = beta·dst_ij + alpha·(a_i · b_j): dot products of rows.
		rows = func(lo, hi int) {
			for i := lo; i < hi; i++ {
				d, ai := dst.Row(i), a.Row(i)
				for j := range d {
					s := alpha * dot(ai, b.Row(j))
					if beta == 0 {
						d[j] = s
					} else {
						d[j] = beta*d[j] + s
					}
				}
			}
		}
	default: // Trans, NoTrans
		// dst_i = beta·dst_i + Σ_l alpha·a_li · b_l: the inner dimension is
		// the long one (Hᵀ·dZ), so stream b once per range of dst rows.
		rows = func(lo, hi int) {
			for i := lo; i < hi; i++ {
				scaleRow(dst.Row(i), beta)
			}
			for l := 0; l < k; l++ {
				al, bl := a.Row(l), b.Row(l)
				for i := lo; i < hi; i++ {
					axpy(dst.Row(i), alpha*al[i], bl)
				}
			}
		}
	}
	parallelRanges(bounds, rows)
}
