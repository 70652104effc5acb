package ckern

// #include "kern.h"
import "C"

import "unsafe"

func pf(s []float32) *C.float {
	if len(s) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&s[0]))
}

func pi32(s []int32) *C.int32_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.int32_t)(unsafe.Pointer(&s[0]))
}

func pu64(s []uint64) *C.uint64_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.uint64_t)(unsafe.Pointer(&s[0]))
}

func pu16(s []uint16) *C.uint16_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.uint16_t)(unsafe.Pointer(&s[0]))
}

type i64 = C.int64_t

func b2i(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Fill sets rows [lo, hi) of d (cols wide, stride ldd) to v.
func Fill(d []float32, ldd, cols int, v float32, lo, hi int) {
	C.sgk_fill(pf(d), i64(ldd), i64(cols), C.float(v), i64(lo), i64(hi))
}

// Copy copies rows [lo, hi) of s into d.
func Copy(d []float32, ldd int, s []float32, lds, cols, lo, hi int) {
	C.sgk_copy(pf(d), i64(ldd), pf(s), i64(lds), i64(cols), i64(lo), i64(hi))
}

// Add computes rows [lo, hi) of d = a + b.
func Add(d []float32, ldd int, a []float32, lda int, b []float32, ldb, cols, lo, hi int) {
	C.sgk_add(pf(d), i64(ldd), pf(a), i64(lda), pf(b), i64(ldb), i64(cols), i64(lo), i64(hi))
}

// Scale computes rows [lo, hi) of d = alpha·a.
func Scale(d []float32, ldd int, alpha float32, a []float32, lda, cols, lo, hi int) {
	C.sgk_scale(pf(d), i64(ldd), C.float(alpha), pf(a), i64(lda), i64(cols), i64(lo), i64(hi))
}

// ReLU computes rows [lo, hi) of d = max(a, 0).
func ReLU(d []float32, ldd int, a []float32, lda, cols, lo, hi int) {
	C.sgk_relu(pf(d), i64(ldd), pf(a), i64(lda), i64(cols), i64(lo), i64(hi))
}

// ReLUBackward computes rows [lo, hi) of d = g where act > 0, else 0.
func ReLUBackward(d []float32, ldd int, g []float32, ldg int, act []float32, lda, cols, lo, hi int) {
	C.sgk_relu_bwd(pf(d), i64(ldd), pf(g), i64(ldg), pf(act), i64(lda), i64(cols), i64(lo), i64(hi))
}

// ReLURecord computes rows [lo, hi) of d = max(a, 0) and sets bit j of
// row i's wpr words in pos where d > 0.
func ReLURecord(d []float32, ldd int, a []float32, lda, cols int, pos []uint64, wpr, lo, hi int) {
	C.sgk_relu_record(pf(d), i64(ldd), pf(a), i64(lda), i64(cols), pu64(pos), i64(wpr), i64(lo), i64(hi))
}

// ReLUBackwardBits computes rows [lo, hi) of d = g where pos has the bit,
// else +0.
func ReLUBackwardBits(d []float32, ldd int, g []float32, ldg, cols int, pos []uint64, wpr, lo, hi int) {
	C.sgk_relu_bwd_bits(pf(d), i64(ldd), pf(g), i64(ldg), i64(cols), pu64(pos), i64(wpr), i64(lo), i64(hi))
}

// ReLUBackwardBitsBF16 is ReLUBackwardBits on bfloat16 rows: rows [lo,
// hi) of d = g where pos has the bit, else +0.
func ReLUBackwardBitsBF16(d []uint16, ldd int, g []uint16, ldg, cols int, pos []uint64, wpr, lo, hi int) {
	C.sgk_relu_bwd_bits_bf16(pu16(d), i64(ldd), pu16(g), i64(ldg), i64(cols), pu64(pos), i64(wpr), i64(lo), i64(hi))
}

// DropoutArgs are the mask coordinates of a dropout kernel.
type DropoutArgs struct {
	Verts       []int32
	Seed        uint64
	Step, Site  int
	Col0        int
	Threshold   uint64
	Scale       float32
	Keep        []uint64 // nil: no record (zeros skipped)
	WordsPerRow int
	ReLU        bool
}

// Dropout runs the dropout kernel on rows [lo, hi).
func Dropout(d []float32, ldd int, s []float32, lds, cols int, a *DropoutArgs, lo, hi int) {
	C.sgk_dropout(pf(d), i64(ldd), pf(s), i64(lds), i64(cols), pi32(a.Verts), C.uint64_t(a.Seed),
		i64(a.Step), i64(a.Site), i64(a.Col0), C.uint64_t(a.Threshold), C.float(a.Scale),
		pu64(a.Keep), i64(a.WordsPerRow), b2i(a.ReLU), i64(lo), i64(hi))
}

// ApplyMask applies recorded mask bits to rows [lo, hi).
func ApplyMask(d []float32, ldd int, s []float32, lds, cols int, keep []uint64, wpr int, scale float32, lo, hi int) {
	C.sgk_apply_mask(pf(d), i64(ldd), pf(s), i64(lds), i64(cols), pu64(keep), i64(wpr), C.float(scale), i64(lo), i64(hi))
}

// SumSquares sets ss[i] for rows [lo, hi) of z.
func SumSquares(ss, z []float32, ldz, cols, lo, hi int) {
	C.sgk_sumsq(pf(ss), pf(z), i64(ldz), i64(cols), i64(lo), i64(hi))
}

// RMSNormApply finishes RMSNorm on rows [lo, hi).
func RMSNormApply(d []float32, ldd int, u []float32, ldu int, z []float32, ldz, cols int,
	rms, ss, w []float32, n, eps float64, relu bool, lo, hi int) {
	C.sgk_rms_apply(pf(d), i64(ldd), pf(u), i64(ldu), pf(z), i64(ldz), i64(cols), pf(rms), pf(ss), pf(w),
		C.double(n), C.double(eps), b2i(relu), i64(lo), i64(hi))
}

// RMSNormDot sets dot[i] = Σ_j da·w·u for rows [lo, hi).
func RMSNormDot(dot, da []float32, ldda int, u []float32, ldu int, w []float32, cols, lo, hi int) {
	C.sgk_rms_dot(pf(dot), pf(da), i64(ldda), pf(u), i64(ldu), pf(w), i64(cols), i64(lo), i64(hi))
}

// RMSNormGScale sets g[j] = Σ_rows da·u (rows in order) for columns [lo, hi).
func RMSNormGScale(g, da []float32, ldda int, u []float32, ldu, rows, lo, hi int) {
	C.sgk_rms_gscale(pf(g), pf(da), i64(ldda), pf(u), i64(ldu), i64(rows), i64(lo), i64(hi))
}

// RMSNormFinish computes rows [lo, hi) of dz = (da·w − u·dot·inv)/rms.
func RMSNormFinish(dz []float32, lddz int, da []float32, ldda int, u []float32, ldu, cols int,
	w, dot, rms []float32, inv float32, lo, hi int) {
	C.sgk_rms_finish(pf(dz), i64(lddz), pf(da), i64(ldda), pf(u), i64(ldu), i64(cols), pf(w), pf(dot), pf(rms),
		C.float(inv), i64(lo), i64(hi))
}

// OptimArgs are one optimizer step's constants (Kind 0 SGD, 1 Adam, 2 AdamW).
type OptimArgs struct {
	Kind                      int
	LR, WD, Beta1, Beta2, Eps float64
	Corr1, Corr2              float64
}

// Optim updates elements [lo, hi) of w, m and v from g.
func Optim(w, g, m, v []float32, a *OptimArgs, lo, hi int) {
	C.sgk_optim(pf(w), pf(g), pf(m), pf(v), C.int(a.Kind), C.double(a.LR), C.double(a.WD),
		C.double(a.Beta1), C.double(a.Beta2), C.double(a.Eps), C.double(a.Corr1), C.double(a.Corr2),
		i64(lo), i64(hi))
}

// PackBF16 rounds elements [lo, hi) of s to bfloat16 into d.
func PackBF16(d []uint16, s []float32, lo, hi int) {
	C.sgk_pack_bf16(pu16(d), pf(s), i64(lo), i64(hi))
}

// UnpackBF16 widens elements [lo, hi) of s into d.
func UnpackBF16(d []float32, s []uint16, lo, hi int) {
	C.sgk_unpack_bf16(pf(d), pu16(s), i64(lo), i64(hi))
}

// PackBF16Mat rounds rows [lo, hi) of the strided view s (cols columns)
// to bfloat16 into the view d.
func PackBF16Mat(d []uint16, ldd int, s []float32, lds, cols, lo, hi int) {
	C.sgk_pack_bf16_mat(pu16(d), i64(ldd), pf(s), i64(lds), i64(cols), i64(lo), i64(hi))
}

// UnpackBF16Mat widens rows [lo, hi) of the strided view s into d.
func UnpackBF16Mat(d []float32, ldd int, s []uint16, lds, cols, lo, hi int) {
	C.sgk_unpack_bf16_mat(pf(d), i64(ldd), pu16(s), i64(lds), i64(cols), i64(lo), i64(hi))
}

// GatherRows copies row idx[i] of s to row i of d for rows [lo, hi).
func GatherRows(d []float32, ldd int, s []float32, lds, cols int, idx []int32, lo, hi int) {
	C.sgk_gather_rows(pf(d), i64(ldd), pf(s), i64(lds), i64(cols), pi32(idx), i64(lo), i64(hi))
}

// ScatterAddRows adds row i of s to row idx[i] of d, all rows in order,
// for columns [lo, hi).
func ScatterAddRows(d []float32, ldd int, s []float32, lds, rows int, idx []int32, lo, hi int) {
	C.sgk_scatter_add_rows(pf(d), i64(ldd), pf(s), i64(lds), i64(rows), pi32(idx), i64(lo), i64(hi))
}

// Triad computes a = b + s·c on elements [lo, hi): STREAM's triad, the
// yardstick the kernels' bandwidth is read against.
func Triad(a, b, c []float32, s float32, lo, hi int) {
	C.sgk_triad(pf(a), pf(b), pf(c), C.float(s), i64(lo), i64(hi))
}

// ISA names the instruction set the multiversioned kernels (dropout,
// optimizer) run with on this CPU, for the start-up log.
func ISA() string { return C.GoString(C.sgk_isa()) }
