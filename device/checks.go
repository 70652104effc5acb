package device

import "scalegnn/spmm"

// The argument checks every device makes before running an operation, so
// that a misuse panics with the same ShapeError whichever device runs it.

// maskWords is the words of a row of a bit mask (dropout keeps, ReLU
// positions): spmm.MaskWords, the one place of the layout.
func maskWords(cols int) int { return spmm.MaskWords(cols) }

func checkDropout(name string, dst, src Mat, keep *Buffer[uint64], spec *Dropout) {
	checkSame(name, dst, src)
	checkLen2(name, "Verts", spec.Verts.Len(), dst.rows)
	if !(spec.P >= 0 && spec.P < 1) {
		shapePanic("%s: p = %g outside [0, 1)", name, spec.P)
	}
	if spec.Col0 < 0 {
		shapePanic("%s: Col0 = %d", name, spec.Col0)
	}
	if keep != nil {
		checkLen2(name, "keep", keep.Len(), dst.rows*maskWords(dst.cols))
	}
}

// checkReLUBits: name and posName are constants (no concatenation, which
// would allocate on every call).
func checkReLUBits(name, posName string, dst, src Mat, pos Buffer[uint64]) {
	checkSame(name, dst, src)
	checkLen(posName, pos.Len(), dst.rows*maskWords(dst.cols))
}

func checkApplyMask(dst, src Mat, keep Buffer[uint64], p float64) {
	checkSame("ApplyMask", dst, src)
	checkLen("ApplyMask keep", keep.Len(), dst.rows*maskWords(dst.cols))
	if !(p >= 0 && p < 1) {
		shapePanic("ApplyMask: p = %g outside [0, 1)", p)
	}
}

func checkNorm(name string, norm RMSNorm) {
	if norm.N < 1 || !(norm.Eps >= 0) {
		shapePanic("%s: %+v", name, norm)
	}
}

func checkRMSNormApply(dst, u Mat, rms Buffer[float32], z Mat, ss, scale Buffer[float32], norm RMSNorm) {
	checkSame("RMSNormApply", dst, u, z)
	checkLen("RMSNormApply rms", rms.Len(), z.rows)
	checkLen("RMSNormApply ss", ss.Len(), z.rows)
	checkLen("RMSNormApply scale", scale.Len(), z.cols)
	checkNorm("RMSNormApply", norm)
}

func checkRMSNormBackwardLocal(gScale, dot Buffer[float32], da, u Mat, scale Buffer[float32]) {
	checkSame("RMSNormBackwardLocal", da, u)
	checkLen("RMSNormBackwardLocal gScale", gScale.Len(), da.cols)
	checkLen("RMSNormBackwardLocal dot", dot.Len(), da.rows)
	checkLen("RMSNormBackwardLocal scale", scale.Len(), da.cols)
}

func checkRMSNormBackwardFinish(dz, da, u Mat, scale, dot, rms Buffer[float32], norm RMSNorm) {
	checkSame("RMSNormBackwardFinish", dz, da, u)
	checkLen("RMSNormBackwardFinish scale", scale.Len(), da.cols)
	checkLen("RMSNormBackwardFinish dot", dot.Len(), da.rows)
	checkLen("RMSNormBackwardFinish rms", rms.Len(), da.rows)
	checkNorm("RMSNormBackwardFinish", norm)
}

func checkOptim(w, g, m, v Buffer[float32], st OptimStep) {
	checkLen("OptimStep g", g.Len(), w.Len())
	checkLen("OptimStep m", m.Len(), w.Len())
	checkLen("OptimStep v", v.Len(), w.Len())
	if st.Kind != SGD && st.Kind != Adam && st.Kind != AdamW {
		shapePanic("OptimStep: kind %d", st.Kind)
	}
}

// checkGather checks a row gather (scatter false: dst row i = src row
// idx[i]) or scatter (scatter true: dst row idx[i] += src row i).
func checkGather(name string, dst, src Mat, idx Buffer[int32], scatter bool) {
	checkGatherViews(name, dst.view, src.view, idx, scatter)
}

// checkGatherViews is checkGather for views of any element type.
func checkGatherViews[T Elem](name string, dst, src view[T], idx Buffer[int32], scatter bool) {
	dst.check(name, "dst")
	src.check(name, "src")
	if dst.cols != src.cols {
		shapePanic("%s: dst %v, src %v", name, dst, src)
	}
	n, limit := dst.rows, src.rows
	if scatter {
		n, limit = src.rows, dst.rows
	}
	checkGather1(name, n, limit, idx)
}

func checkGather1(name string, n, srcLen int, idx Buffer[int32]) {
	checkLen2(name, "idx", idx.Len(), n)
	for i, r := range idx.checkable() {
		if r < 0 || int(r) >= srcLen {
			shapePanic("%s: idx[%d] = %d outside %d elements", name, i, r, srcLen)
		}
	}
}

func checkSpMM(dst Mat, a *CSR, b Mat) { checkSpMMViews("SpMM", dst.view, a, b.view) }

// checkSpMMViews checks dst = a·b for views of any element types; name
// is the operation's.
func checkSpMMViews[D, B Elem](name string, dst view[D], a *CSR, b view[B]) {
	dst.check(name, "dst")
	b.check(name, "b")
	if b.rows != a.Cols() || dst.rows != a.Rows() || dst.cols != b.cols {
		shapePanic("%s: dst %v = a %d×%d · b %v", name, dst, a.Rows(), a.Cols(), b)
	}
}

func checkGemm(tA, tB spmm.Op, a, b, dst Mat) {
	checkGemmViews("Gemm", tA, tB, a.view, b.view, dst.view)
}

// checkGemmViews checks dst = op(a)·op(b) for operands of any element
// type and a float32 dst; name is the operation's.
func checkGemmViews[T Elem](name string, tA, tB spmm.Op, a, b view[T], dst view[float32]) {
	a.check(name, "a")
	b.check(name, "b")
	dst.check(name, "dst")
	m, k := a.rows, a.cols
	if tA == spmm.Trans {
		m, k = k, m
	}
	kb, n := b.rows, b.cols
	if tB == spmm.Trans {
		kb, n = n, kb
	}
	if k != kb || dst.rows != m || dst.cols != n {
		shapePanic("%s: dst %v = op(a) %d×%d · op(b) %d×%d", name, dst, m, k, kb, n)
	}
}
