package device

import "scalegnn/spmm"

// bfloat16 mixed precision (issue 28): features and activations kept in
// bfloat16 between operations, products that read them with float32
// sums, everything else (weights, optimizer, loss, softmax, norms,
// reductions) in float32. A bfloat16 is a uint16, the high half of a
// float32's bits; rounding to it is spmm.ToBF16 on every device (nearest,
// ties to even, NaN kept, no flush of subnormals), widening is exact.

// MatBF16 is a row-major matrix view of a bfloat16 Buffer, the
// counterpart of Mat: element (i, j) is element off + i*stride + j of the
// buffer, with the same checks, slicing and copies as Mat.
type MatBF16 struct{ view[uint16] }

// MatrixBF16 returns the rows×cols view with stride cols of buf's first
// rows*cols elements.
func MatrixBF16(buf Buffer[uint16], rows, cols int) MatBF16 {
	return MatrixStrideBF16(buf, rows, cols, cols)
}

// MatrixStrideBF16 returns the rows×cols view of buf with the given stride.
func MatrixStrideBF16(buf Buffer[uint16], rows, cols, stride int) MatBF16 {
	return MatBF16{newView("MatrixBF16", buf, rows, cols, stride)}
}

// Slice returns rows [r0, r1) and columns [c0, c1) of m, sharing storage.
func (m MatBF16) Slice(r0, r1, c0, c1 int) MatBF16 { return MatBF16{m.slice(r0, r1, c0, c1)} }

// Flat returns the elements of a contiguous view as a buffer sharing its
// memory (as Mat.Flat); a strided view panics.
func (m MatBF16) Flat() Buffer[uint16] { return m.flat() }

// UploadMatBF16 copies the row-major rows×cols host matrix of bfloat16
// bits src into the view dst; len(src) must be Rows·Cols.
func UploadMatBF16(dev Device, dst MatBF16, src []uint16) {
	uploadView(dev, "UploadMatBF16", dst.view, src)
}

// DownloadMatBF16 copies the view src into the row-major host matrix dst;
// len(dst) must be Rows·Cols.
func DownloadMatBF16(dev Device, dst []uint16, src MatBF16) {
	downloadView(dev, "DownloadMatBF16", dst, src.view)
}

// dense is the spmm view of m (its memory is host memory).
func (m MatBF16) dense() spmm.DenseBF16 {
	return spmm.DenseBF16{Rows: m.rows, Cols: m.cols, Stride: max(m.strid, 1), Data: m.data()}
}

// BF16Ops are the bfloat16 operations every Device has: the products that
// read bfloat16 operands with float32 sums, and the conversions between
// float32 and bfloat16 views.
type BF16Ops interface {
	// SpMMBF16 computes dst = a·b for a bfloat16 b, overwriting dst, with
	// float32 sums: on the host devices SpMM's kernel and order of
	// summation with each element of b widened as it is read, so the
	// result is SpMM's on b widened, bit for bit. dst must not overlap b.
	SpMMBF16(dst Mat, a *CSR, b MatBF16)
	// SpMMBF16ToBF16 is SpMMBF16 into a bfloat16 dst: each float32 sum
	// is rounded once (spmm.ToBF16) when it is complete.
	SpMMBF16ToBF16(dst MatBF16, a *CSR, b MatBF16)
	// SpMMBF16ToBF16Masked is SpMMBF16ToBF16 with each float32 sum
	// masked before it is rounded: ApplyMask's keep (kept sums scaled by
	// 1/(1−p), the others times 0), then ReLUBackwardBits's pos (+0 where
	// the bit is clear), then one rounding (spmm.MaskedBF16); keep and pos
	// are laid out as DropoutRecord and ReLURecord write them. A dropout's
	// and a ReLU's gradients fused into the product that computes them,
	// so that its float32 result is never stored whole (gcn's dF̃ into a
	// hidden output kept in bfloat16, in training with dropout): the
	// bits of SpMMBF16, ApplyMask, ReLUBackwardBits and PackMatBF16 in
	// turn. dst must not overlap b.
	SpMMBF16ToBF16Masked(dst MatBF16, a *CSR, b MatBF16, keep, pos Buffer[uint64], p float64)
	// GemmBF16 computes dst = alpha·op(a)·op(b) + beta·dst for bfloat16 a
	// and b, with float32 products and sums and a float32 dst; beta == 0
	// does not read dst. All four transpose forms are supported.
	GemmBF16(tA, tB spmm.Op, alpha float32, a, b MatBF16, beta float32, dst Mat)
	// PackMatBF16 rounds the view src into the view dst (spmm.ToBF16);
	// the shapes must agree, the strides need not.
	PackMatBF16(dst MatBF16, src Mat)
	// UnpackMatBF16 widens the view src into the view dst (exactly).
	UnpackMatBF16(dst Mat, src MatBF16)
	// ReLUBackwardBitsBF16 is ReLUBackwardBits on bfloat16 views: dst =
	// grad where pos has the bit (ReLURecord's positions), else +0; dst
	// may be grad. A select, so it commutes with rounding: on a rounded
	// gradient it gives the rounded ReLUBackwardBits, bit for bit.
	ReLUBackwardBitsBF16(dst, grad MatBF16, pos Buffer[uint64])
	// GatherRowsBF16 is GatherRows on bfloat16 views: row i of dst is
	// row idx[i] of src, copied (a mini-batch's bfloat16 features).
	GatherRowsBF16(dst, src MatBF16, idx Buffer[int32])
}

// The argument checks of the bfloat16 operations, the same on every
// device.

func checkSpMMBF16[D Elem](dst view[D], a *CSR, b view[uint16]) {
	checkSpMMViews("SpMMBF16", dst, a, b)
}

func checkSpMMBF16Masked(dst MatBF16, a *CSR, b MatBF16, keep, pos Buffer[uint64], p float64) {
	checkSpMMViews("SpMMBF16ToBF16Masked", dst.view, a, b.view)
	n := dst.rows * maskWords(dst.cols)
	checkLen("SpMMBF16ToBF16Masked keep", keep.Len(), n)
	checkLen("SpMMBF16ToBF16Masked pos", pos.Len(), n)
	if !(p >= 0 && p < 1) {
		shapePanic("SpMMBF16ToBF16Masked: p = %g outside [0, 1)", p)
	}
}

func checkGemmBF16(tA, tB spmm.Op, a, b MatBF16, dst Mat) {
	checkGemmViews("GemmBF16", tA, tB, a.view, b.view, dst.view)
}

func checkReLUBitsBF16(dst, grad MatBF16, pos Buffer[uint64]) {
	dst.check("ReLUBackwardBitsBF16", "dst")
	grad.check("ReLUBackwardBitsBF16", "grad")
	if dst.rows != grad.rows || dst.cols != grad.cols {
		shapePanic("ReLUBackwardBitsBF16: dst %v, grad %v", dst, grad)
	}
	checkLen("ReLUBackwardBitsBF16 pos", pos.Len(), dst.rows*maskWords(dst.cols))
}

func checkConvert[D, S Elem](name string, dst view[D], src view[S]) {
	dst.check(name, "dst")
	src.check(name, "src")
	if dst.rows != src.rows || dst.cols != src.cols {
		shapePanic("%s: dst %v, src %v", name, dst, src)
	}
}

// GemmBF16ToBF16 computes dst = alpha·a·op(b) for bfloat16 a and b with
// float32 products and sums, each finished sum rounded once into the
// bfloat16 dst: GemmBF16 into a float32 matrix followed by PackMatBF16,
// a block of rows at a time through scratch (a float32 view as wide as
// dst; its rows set the block), so that the float32 result never exists
// whole. Rows of a·op(b) are independent, so the blocks change no sum.
// a is not transposed (its rows are dst's); scratch must not overlap the
// operands. each, when not nil, runs on every float32 block (rows r0 to
// r1 of the result) before it is rounded: an element-wise step fused
// into the product's pass (gcn's ReLU of a hidden output kept in
// bfloat16).
func GemmBF16ToBF16(dev Device, tB spmm.Op, alpha float32, a, b MatBF16, dst MatBF16, scratch Mat, each func(r0, r1 int, block Mat)) {
	if scratch.Rows() < 1 || scratch.Cols() != dst.Cols() {
		shapePanic("GemmBF16ToBF16: scratch of %d×%d for a dst %d wide", scratch.Rows(), scratch.Cols(), dst.Cols())
	}
	if a.Rows() != dst.Rows() {
		shapePanic("GemmBF16ToBF16: a has %d rows, dst %d", a.Rows(), dst.Rows())
	}
	n, k := dst.Cols(), a.Cols()
	for r0 := 0; r0 < dst.Rows(); r0 += scratch.Rows() {
		r1 := min(r0+scratch.Rows(), dst.Rows())
		s := scratch.Slice(0, r1-r0, 0, n)
		dev.GemmBF16(spmm.NoTrans, tB, alpha, a.Slice(r0, r1, 0, k), b, 0, s)
		if each != nil {
			each(r0, r1, s)
		}
		dev.PackMatBF16(dst.Slice(r0, r1, 0, n), s)
	}
}
