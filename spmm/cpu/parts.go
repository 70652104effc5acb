package cpu

import "scalegnn/spmm"

// Entry points for callers that run the products on threads of their own
// (package device's CPU device, on its worker pool): one range of SpMM
// rows, one block of a GEMM. They allocate nothing; Backend's SpMM and
// Gemm are built on them.

// SpMMRows computes rows [r0, r1) of dst = a·b with the kernel for the
// widest instruction set the CPU runs. The caller has checked the shapes
// (spmm.CheckSpMM) and 0 <= r0 <= r1 <= a.Rows; a malformed CSR row in the
// range panics with a spmm.ShapeError.
func SpMMRows(dst spmm.Dense, a *spmm.CSR, b spmm.Dense, r0, r1 int) {
	if r0 >= r1 || b.Cols == 0 {
		return
	}
	if r := spmmRows(isaAuto, dst, a, b, r0, r1); r >= 0 {
		badRow(r)
	}
}

// GemmPlan is how a product is cut into blocks: Parts blocks of output
// rows (ByRows) or columns, each one sgemm call.
type GemmPlan struct {
	M, N, K int
	Parts   int
	ByRows  bool
	// Sparse says op(a) is mostly zeros (sparseInput), so that each block
	// skips them (gemmSparseRows) instead of calling sgemm; its blocks
	// are always of output rows.
	Sparse bool
}

// PlanGemm checks a product's shapes and cuts it into blocks for up to
// workers threads: none when it is empty, one when it is small.
func PlanGemm(tA, tB spmm.Op, a, b, dst spmm.Dense, workers int) GemmPlan {
	m, n, k := spmm.CheckGemm(tA, tB, a, b, dst)
	return planGemm(m, n, k, a.Stride, b.Stride, dst.Stride, workers, func() bool { return sparseInput(tA, tB, a, k) })
}

// planGemm cuts an m×n×k product with the given strides into blocks for
// up to workers threads; sparse says whether op(a) is sparse enough to
// skip its zeros (asked only of products worth splitting).
func planGemm(m, n, k, lda, ldb, ldc, workers int, sparse func() bool) GemmPlan {
	p := GemmPlan{M: m, N: n, K: k, Parts: 1}
	if m == 0 || n == 0 {
		p.Parts = 0
		return p
	}
	checkSgemmInts(m, n, k, lda, ldb, ldc)
	if k == 0 || float64(m)*float64(n)*float64(k) < minParallelWork {
		return p
	}
	const minBlock = 32 // below this a block no longer fills BLAS's micro-kernel
	if sparse() {
		p.Sparse, p.ByRows = true, true
		p.Parts = max(1, min(workers, m/minBlock))
		return p
	}
	switch {
	case workers > 1 && m >= 2*minBlock:
		p.Parts, p.ByRows = min(workers, m/minBlock), true
	case workers > 1 && n >= 2*minBlock:
		p.Parts = min(workers, n/minBlock)
	}
	return p
}

// GemmPart computes block part of a product planned by PlanGemm:
// dst = alpha·op(a)·op(b) + beta·dst on its rows or columns. As in BLAS,
// beta == 0 overwrites dst without reading it.
func GemmPart(pl GemmPlan, part int, tA, tB spmm.Op, alpha float32, a, b spmm.Dense, beta float32, dst spmm.Dense) {
	if pl.K == 0 || alpha == 0 {
		// BLAS would handle these too, but not all implementations accept
		// the zero leading dimensions an empty operand may have.
		if part == 0 {
			scale(dst, beta)
		}
		return
	}
	if pl.Sparse {
		gemmSparseRows(tA, alpha, a, b, beta, dst, pl.M*part/pl.Parts, pl.M*(part+1)/pl.Parts)
		return
	}
	w := pl.window(part, tA, tB, a.Rows, a.Cols, b.Rows, b.Cols)
	sgemm(tA, tB, alpha, spmm.Slice(a, w.a[0], w.a[1], w.a[2], w.a[3]), spmm.Slice(b, w.b[0], w.b[1], w.b[2], w.b[3]),
		beta, spmm.Slice(dst, w.d[0], w.d[1], w.d[2], w.d[3]), w.m, w.n, pl.K)
}

// gemmWindow is one block of a dense plan: the rows and columns (r0, r1,
// c0, c1) of a, b and dst as stored that it reads and writes, and its m
// and n. A block of output rows takes rows of op(a), one of output
// columns columns of op(b); one part is the whole product.
type gemmWindow struct {
	a, b, d [4]int
	m, n    int
}

// window returns block part of a dense plan (not Sparse) for operands a
// (aRows×aCols) and b (bRows×bCols) as stored. It works on sizes alone, so
// that float32 and bfloat16 operands share it without allocating.
func (pl GemmPlan) window(part int, tA, tB spmm.Op, aRows, aCols, bRows, bCols int) gemmWindow {
	w := gemmWindow{a: [4]int{0, aRows, 0, aCols}, b: [4]int{0, bRows, 0, bCols}, d: [4]int{0, pl.M, 0, pl.N}, m: pl.M, n: pl.N}
	if pl.Parts <= 1 {
		return w
	}
	if pl.ByRows {
		lo, hi := pl.M*part/pl.Parts, pl.M*(part+1)/pl.Parts
		if tA == spmm.Trans {
			w.a[2], w.a[3] = lo, hi
		} else {
			w.a[0], w.a[1] = lo, hi
		}
		w.d[0], w.d[1], w.m = lo, hi, hi-lo
		return w
	}
	lo, hi := pl.N*part/pl.Parts, pl.N*(part+1)/pl.Parts
	if tB == spmm.Trans {
		w.b[0], w.b[1] = lo, hi
	} else {
		w.b[2], w.b[3] = lo, hi
	}
	w.d[2], w.d[3], w.n = lo, hi, hi-lo
	return w
}
