//go:build cgo

package device

import (
	"scalegnn/device/internal/cuda"
	"scalegnn/spmm"
)

// The CUDA device's bfloat16 operations: cuSPARSE's SpMM and cuBLAS's
// GemmEx with bfloat16 operands and float32 computation, and kernels of
// its own for the conversions (cuda_kernels.cu).
//
// cuSPARSE's SpMM takes the sparse values and the dense operand of one
// type (its mixed-precision rows are A and B in CUDA_R_16BF with C in
// CUDA_R_16BF or CUDA_R_32F, computed in CUDA_R_32F), so the bfloat16
// SpMM multiplies by A's values rounded to bfloat16 (spmm.ToBF16): a copy
// of them kept beside the float32 ones (gpuCSR.val16, 2 bytes a nonzero),
// made on the GPU at the first bfloat16 product after each upload. The
// host devices multiply by the float32 values; the CUDA device's result
// differs from theirs by up to 2⁻⁹·Σ|a·b| more (devicetest's SparseBF16).

// SpMMBF16 computes dst = a·b for a bfloat16 b with cuSPARSE (A's values
// in bfloat16, float32 sums and dst).
func (d *CUDA) SpMMBF16(dst Mat, a *CSR, b MatBF16) {
	checkSpMMBF16(dst.view, a, b.view)
	if dst.rows == 0 || dst.cols == 0 {
		return
	}
	if a.NNZ() == 0 {
		d.Fill(dst, 0)
		return
	}
	d.spmmBF16(a, b, dst.addr(), dst.ld(), dst.cols, cuda.R32F)
}

// SpMMBF16ToBF16 computes dst = a·b for a bfloat16 b into a bfloat16 dst
// with cuSPARSE, which rounds its float32 sums to bfloat16 once.
func (d *CUDA) SpMMBF16ToBF16(dst MatBF16, a *CSR, b MatBF16) {
	checkSpMMBF16(dst.view, a, b.view)
	if dst.rows == 0 || dst.cols == 0 {
		return
	}
	if a.NNZ() == 0 {
		d.run2(kFillBF16, dst.rows, dst.cols, argBF16(dst), argInt(dst.strid), 0, argInt(dst.rows), argInt(dst.cols))
		return
	}
	d.spmmBF16(a, b, dst.addr(), dst.ld(), dst.cols, cuda.R16BF)
}

// spmmBF16 runs the bfloat16 SpMM into c (of type ctype), rounding A's
// values to bfloat16 first when this upload has not been.
func (d *CUDA) spmmBF16(a *CSR, b MatBF16, c uintptr, ldc, n int, ctype cuda.DataType) {
	d.mu.Lock()
	defer d.mu.Unlock()
	g := a.g
	d.val16(g)
	d.spmm(g.rows, g.cols, g.nnz, g.rowPtr.addr(0), g.colIdx.addr(0), g.val16.addr(0), n, b.addr(), b.ld(), c, ldc, cuda.SpMMTypes{A: cuda.R16BF, B: cuda.R16BF, C: ctype}, &d.algBF16)
}

// val16 rounds g's values to bfloat16 where this upload has not been.
// The caller holds d.mu.
func (d *CUDA) val16(g *gpuCSR) {
	if !g.val16ok {
		reuseBuf(d, &g.val16, g.nnz)
		d.PackBF16(g.val16, g.val)
		g.val16ok = true
	}
}

// maskElems bounds the float32 scratch through which the CUDA device's
// SpMMBF16ToBF16Masked runs a block of rows at a time: 16 MiB, 32,768
// rows at width 128.
const maskElems = 1 << 22

// SpMMBF16ToBF16Masked computes dst = a·b with each float32 sum masked
// and rounded (spmm.MaskedBF16). cuSPARSE runs no epilogue, so the
// product runs a block of rows at a time into a float32 scratch of the
// device's (grown once; maskMu guards it), which ApplyMask,
// ReLUBackwardBits and PackMatBF16 then take in turn: the float32 result
// never exists whole. The sums are cuSPARSE's (SparseBF16).
func (d *CUDA) SpMMBF16ToBF16Masked(dst MatBF16, a *CSR, b MatBF16, keep, pos Buffer[uint64], p float64) {
	checkSpMMBF16Masked(dst, a, b, keep, pos, p)
	if dst.rows == 0 || dst.cols == 0 {
		return
	}
	n, wpr := dst.cols, maskWords(dst.cols)
	rows := max(1, min(dst.rows, maskElems/n))
	d.maskMu.Lock()
	defer d.maskMu.Unlock()
	reuseBuf(d, &d.maskScratch, rows*n)
	s := Matrix(d.maskScratch, rows, n)
	for r0 := 0; r0 < dst.rows; r0 += rows {
		r1 := min(r0+rows, dst.rows)
		blk := s.Slice(0, r1-r0, 0, n)
		d.spmmBF16Rows(blk, a, r0, b)
		d.ApplyMask(blk, blk, keep.Slice(r0*wpr, r1*wpr), p)
		d.ReLUBackwardBits(blk, blk, pos.Slice(r0*wpr, r1*wpr))
		d.PackMatBF16(dst.Slice(r0, r1, 0, n), blk)
	}
}

// spmmBF16Rows computes rows [r0, r0+dst.Rows()) of a·b with cuSPARSE on
// a CSR of those rows: their offsets, rebased to 0 from the host's copy
// (gpuCSR.rp32), uploaded in stream order into rowsDev (cuSPARSE's index
// base is 0 or 1, not an arbitrary first offset), and the column indices
// and bfloat16 values from their first entry on. The upload waits for
// the stream: one wait per block.
func (d *CUDA) spmmBF16Rows(dst Mat, a *CSR, r0 int, b MatBF16) {
	n := dst.rows
	g := a.g
	base := g.rp32[r0]
	nnz := int(g.rp32[r0+n] - base)
	if nnz == 0 {
		d.Fill(dst, 0)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.val16(g)
	if cap(d.rowsHost) < n+1 {
		d.rowsHost = make([]int32, n+1)
	}
	d.rowsHost = d.rowsHost[:n+1]
	for i, p := range g.rp32[r0 : r0+n+1] {
		d.rowsHost[i] = p - base
	}
	reuseInto(d, &d.rowsDev, d.rowsHost)
	d.spmm(n, g.cols, nnz, d.rowsDev.addr(0), g.colIdx.addr(int(base)), g.val16.addr(int(base)), dst.cols, b.addr(), b.ld(), dst.addr(), dst.ld(),
		cuda.SpMMTypes{A: cuda.R16BF, B: cuda.R16BF, C: cuda.R32F}, &d.algBF16)
}

// GemmBF16 computes dst = alpha·op(a)·op(b) + beta·dst with cuBLAS's
// GemmEx: bfloat16 a and b, float32 computation and dst (tensor cores
// where the GPU has bfloat16 ones).
func (d *CUDA) GemmBF16(tA, tB spmm.Op, alpha float32, a, b MatBF16, beta float32, dst Mat) {
	checkGemmBF16(tA, tB, a, b, dst)
	k, ok := d.gemmEmpty(tA, a.rows, a.cols, beta, dst)
	if !ok {
		return
	}
	d.gemm("GemmBF16", d.ctx.GemmBF16, tA, tB, k, alpha, a.addr(), a.ld(), b.addr(), b.ld(), beta, dst)
}

// PackMatBF16 rounds src into dst: one flat pass when both views are
// contiguous, else a thread per element of the views.
func (d *CUDA) PackMatBF16(dst MatBF16, src Mat) {
	checkConvert("PackMatBF16", dst.view, src.view)
	if dst.contiguous() && src.contiguous() {
		d.run1(kPackBF16, dst.rows*dst.cols, argBF16(dst), argMat(src), argInt(dst.rows*dst.cols))
		return
	}
	d.run2(kPackBF16Mat, dst.rows, dst.cols, argBF16(dst), argInt(dst.strid), argMat(src), argInt(src.strid),
		argInt(dst.rows), argInt(dst.cols))
}

// UnpackMatBF16 widens src into dst, as PackMatBF16 runs.
func (d *CUDA) UnpackMatBF16(dst Mat, src MatBF16) {
	checkConvert("UnpackMatBF16", dst.view, src.view)
	if dst.contiguous() && src.contiguous() {
		d.run1(kUnpackBF16, dst.rows*dst.cols, argMat(dst), argBF16(src), argInt(dst.rows*dst.cols))
		return
	}
	d.run2(kUnpackBF16Mat, dst.rows, dst.cols, argMat(dst), argInt(dst.strid), argBF16(src), argInt(src.strid),
		argInt(dst.rows), argInt(dst.cols))
}

// ReLUBackwardBitsBF16 computes dst = grad where pos has the bit, else +0.
func (d *CUDA) ReLUBackwardBitsBF16(dst, grad MatBF16, pos Buffer[uint64]) {
	checkReLUBitsBF16(dst, grad, pos)
	d.run2(kReLUBackwardBitsBF16, dst.rows, dst.cols, argBF16(dst), argInt(dst.strid), argBF16(grad), argInt(grad.strid),
		argBuf(pos), argInt(maskWords(dst.cols)), argInt(dst.rows), argInt(dst.cols))
}

// GatherRowsBF16 sets row i of dst to row idx[i] of src.
func (d *CUDA) GatherRowsBF16(dst, src MatBF16, idx Buffer[int32]) {
	d.checkIndices(idx, func(idx Buffer[int32]) { checkGatherViews("GatherRowsBF16", dst.view, src.view, idx, false) })
	d.run2(kGatherRowsBF16, dst.rows, dst.cols, argBF16(dst), argInt(dst.strid), argBF16(src), argInt(src.strid), argBuf(idx),
		argInt(dst.rows), argInt(dst.cols))
}

func argBF16(m MatBF16) uint64 { return uint64(m.addr()) }
