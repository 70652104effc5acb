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
	p := GemmPlan{M: m, N: n, K: k, Parts: 1}
	if m == 0 || n == 0 {
		p.Parts = 0
		return p
	}
	checkSgemmInts(m, n, k, a.Stride, b.Stride, dst.Stride)
	if k == 0 || float64(m)*float64(n)*float64(k) < minParallelWork {
		return p
	}
	const minBlock = 32 // below this a block no longer fills BLAS's micro-kernel
	if sparseInput(tA, tB, a, k) {
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
	m, n, k := pl.M, pl.N, pl.K
	if k == 0 || alpha == 0 {
		// BLAS would handle these too, but not all implementations accept
		// the zero leading dimensions an empty operand may have.
		if part == 0 {
			scale(dst, beta)
		}
		return
	}
	if pl.Sparse {
		gemmSparseRows(tA, alpha, a, b, beta, dst, m*part/pl.Parts, m*(part+1)/pl.Parts)
		return
	}
	if pl.Parts <= 1 {
		sgemm(tA, tB, alpha, a, b, beta, dst, m, n, k)
		return
	}
	if pl.ByRows {
		lo, hi := m*part/pl.Parts, m*(part+1)/pl.Parts
		var ap spmm.Dense // rows [lo, hi) of op(a)
		if tA == spmm.Trans {
			ap = spmm.Slice(a, 0, a.Rows, lo, hi)
		} else {
			ap = spmm.Slice(a, lo, hi, 0, a.Cols)
		}
		sgemm(tA, tB, alpha, ap, b, beta, spmm.Slice(dst, lo, hi, 0, n), hi-lo, n, k)
		return
	}
	lo, hi := n*part/pl.Parts, n*(part+1)/pl.Parts
	var bp spmm.Dense // columns [lo, hi) of op(b)
	if tB == spmm.Trans {
		bp = spmm.Slice(b, lo, hi, 0, b.Cols)
	} else {
		bp = spmm.Slice(b, 0, b.Rows, lo, hi)
	}
	sgemm(tA, tB, alpha, a, bp, beta, spmm.Slice(dst, 0, m, lo, hi), m, hi-lo, k)
}
