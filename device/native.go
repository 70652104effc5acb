package device

import (
	"fmt"
	"math"

	"scalegnn/spmm"
)

// Native is the pure-Go device: plain loops on one goroutine for the
// element-wise operations and spmm.Native for SpMM and GEMM. It is the
// reference the fast devices are compared with and the device of builds
// without cgo.
type Native struct {
	be *spmm.Native
	// threads is what spmm.Native splits products over (0: GOMAXPROCS).
	threads int
}

var _ Device = (*Native)(nil)

// NewNative returns a Native device whose products use up to threads
// goroutines; threads <= 0 means GOMAXPROCS.
func NewNative(threads int) *Native {
	return &Native{be: spmm.NewNative(threads), threads: threads}
}

// Name returns "native".
func (d *Native) Name() string { return "native" }

// Describe returns the start-up log line.
func (d *Native) Describe() string {
	return fmt.Sprintf("native (pure Go; element-wise on 1 thread, products on %s)", threadsString(d.threads))
}

func threadsString(t int) string {
	switch {
	case t <= 0:
		return "GOMAXPROCS threads"
	case t == 1:
		return "1 thread"
	}
	return fmt.Sprintf("%d threads", t)
}

func (d *Native) memory() deviceMemory { return nil }

// UploadCSR copies a into device memory.
func (d *Native) UploadCSR(a *spmm.CSR) *CSR { return uploadCSR(a) }

// UploadCSRInto makes dst hold a, sharing a's arrays (host memory).
func (d *Native) UploadCSRInto(dst *CSR, a *spmm.CSR) {
	validateCSR(a)
	dst.a, dst.bounds = a, dst.bounds[:0]
}

// uploadCSR validates a and copies it.
func uploadCSR(a *spmm.CSR) *CSR {
	nnz := validateCSR(a)
	c := &spmm.CSR{Rows: a.Rows, Cols: a.Cols,
		RowPtr: append([]int64(nil), a.RowPtr...),
		ColIdx: append([]int32(nil), a.ColIdx[:nnz]...),
		Val:    append([]float32(nil), a.Val[:nnz]...)}
	return &CSR{a: c}
}

// validateCSR checks a and returns its nonzeros: a device's kernels index
// the CSR without checks, so a malformed one (row pointers not
// non-decreasing from 0, a column out of range) panics here, once per
// upload, with a ShapeError.
func validateCSR(a *spmm.CSR) int64 {
	if a.Rows < 0 || a.Cols < 0 || len(a.RowPtr) != a.Rows+1 {
		shapePanic("UploadCSR: %d×%d with %d row pointers", a.Rows, a.Cols, len(a.RowPtr))
	}
	nnz := a.RowPtr[a.Rows]
	if a.RowPtr[0] != 0 || nnz > int64(len(a.ColIdx)) || nnz > int64(len(a.Val)) {
		shapePanic("UploadCSR: row pointers from %d to %d with %d column indices and %d values",
			a.RowPtr[0], nnz, len(a.ColIdx), len(a.Val))
	}
	for i := range a.Rows {
		if a.RowPtr[i+1] < a.RowPtr[i] {
			shapePanic("UploadCSR: row pointer %d decreases", i+1)
		}
	}
	for p, c := range a.ColIdx[:nnz] {
		if c < 0 || int(c) >= a.Cols {
			shapePanic("UploadCSR: column index %d at %d outside %d columns", c, p, a.Cols)
		}
	}
	return nnz
}

// dense is the spmm view of m (its memory is host memory).
func (m Mat) dense() spmm.Dense {
	return spmm.Dense{Rows: m.rows, Cols: m.cols, Stride: max(m.strid, 1), Data: m.data()}
}

// SpMM computes dst = a·b.
func (d *Native) SpMM(dst Mat, a *CSR, b Mat) {
	checkSpMM(dst, a, b)
	d.be.SpMM(dst.dense(), a.a, b.dense())
}

// Gemm computes dst = alpha·op(a)·op(b) + beta·dst.
func (d *Native) Gemm(tA, tB spmm.Op, alpha float32, a, b Mat, beta float32, dst Mat) {
	checkGemm(tA, tB, a, b, dst)
	d.be.Gemm(tA, tB, alpha, a.dense(), b.dense(), beta, dst.dense())
}

// Fill sets every element of dst to v.
func (d *Native) Fill(dst Mat, v float32) {
	dst.check("Fill", "")
	for i := range dst.rows {
		r := dst.row(i)
		for j := range r {
			r[j] = v
		}
	}
}

// Copy copies src into dst.
func (d *Native) Copy(dst, src Mat) {
	checkSame("Copy", dst, src)
	for i := range dst.rows {
		copy(dst.row(i), src.row(i))
	}
}

// Add computes dst = a + b.
func (d *Native) Add(dst, a, b Mat) {
	checkSame("Add", dst, a, b)
	for i := range dst.rows {
		o, x, y := dst.row(i), a.row(i), b.row(i)
		for j := range o {
			o[j] = x[j] + y[j]
		}
	}
}

// Scale computes dst = alpha·a.
func (d *Native) Scale(dst Mat, alpha float32, a Mat) {
	checkSame("Scale", dst, a)
	for i := range dst.rows {
		o, x := dst.row(i), a.row(i)
		for j := range o {
			o[j] = alpha * x[j]
		}
	}
}

// ReLU computes dst = max(a, 0).
func (d *Native) ReLU(dst, a Mat) {
	checkSame("ReLU", dst, a)
	for i := range dst.rows {
		o, x := dst.row(i), a.row(i)
		for j := range o {
			o[j] = max(x[j], 0)
		}
	}
}

// ReLURecord computes dst = max(a, 0) and records where dst > 0.
func (d *Native) ReLURecord(dst, a Mat, pos Buffer[uint64]) {
	checkReLUBits("ReLURecord", "ReLURecord pos", dst, a, pos)
	wpr := maskWords(dst.cols)
	for i := range dst.rows {
		o, x, w := dst.row(i), a.row(i), pos.host[i*wpr:(i+1)*wpr]
		clear(w)
		for j := range o {
			o[j] = max(x[j], 0)
			if o[j] > 0 {
				w[j/64] |= 1 << (j % 64)
			}
		}
	}
}

// ReLUBackwardBits computes dst = grad where pos has the bit, else 0.
func (d *Native) ReLUBackwardBits(dst, grad Mat, pos Buffer[uint64]) {
	checkReLUBits("ReLUBackwardBits", "ReLUBackwardBits pos", dst, grad, pos)
	selectBits(dst.view, grad.view, pos)
}

// selectBits sets dst = grad where pos has the bit, else +0 (float32 or
// bfloat16 views; dst may be grad).
func selectBits[T float32 | uint16](dst, grad view[T], pos Buffer[uint64]) {
	wpr := maskWords(dst.cols)
	for i := range dst.rows {
		o, g, w := dst.row(i), grad.row(i), pos.host[i*wpr:(i+1)*wpr]
		for j := range o {
			if w[j/64]>>(j%64)&1 != 0 {
				o[j] = g[j]
			} else {
				o[j] = 0
			}
		}
	}
}

// ReLUBackward computes dst = grad where act > 0, else 0.
func (d *Native) ReLUBackward(dst, grad, act Mat) {
	checkSame("ReLUBackward", dst, grad, act)
	for i := range dst.rows {
		o, g, a := dst.row(i), grad.row(i), act.row(i)
		for j := range o {
			if a[j] > 0 {
				o[j] = g[j]
			} else {
				o[j] = 0
			}
		}
	}
}

// Dropout applies spec's mask to src without recording it.
func (d *Native) Dropout(dst, src Mat, spec Dropout) {
	checkDropout("Dropout", dst, src, nil, &spec)
	scale, th := dropScale(spec.P), dropThreshold(spec.P)
	for i := range dst.rows {
		key := rowKey(spec.Seed, spec.Step, spec.Site, spec.Verts.host[i])
		o, x := dst.row(i), src.row(i)
		for j := range o {
			v := x[j]
			o[j] = 0
			if v != 0 {
				o[j] = v * scale[keep01(key, spec.Col0+j, th)]
			}
		}
	}
}

// DropoutRecord applies spec's mask to src and records it in keep.
func (d *Native) DropoutRecord(dst, src Mat, keep Buffer[uint64], spec Dropout) {
	checkDropout("DropoutRecord", dst, src, &keep, &spec)
	nativeDropoutRecord(dst, src, keep, spec, false)
}

// ReLUDropoutRecord applies max(·, 0) and then spec's mask, recording it.
func (d *Native) ReLUDropoutRecord(dst, src Mat, keep Buffer[uint64], spec Dropout) {
	checkDropout("ReLUDropoutRecord", dst, src, &keep, &spec)
	nativeDropoutRecord(dst, src, keep, spec, true)
}

func nativeDropoutRecord(dst, src Mat, keep Buffer[uint64], spec Dropout, relu bool) {
	scale, th := dropScale(spec.P), dropThreshold(spec.P)
	wpr := maskWords(dst.cols)
	for i := range dst.rows {
		key := rowKey(spec.Seed, spec.Step, spec.Site, spec.Verts.host[i])
		o, x, bits := dst.row(i), src.row(i), keep.host[i*wpr:(i+1)*wpr]
		clear(bits)
		for j := range o {
			v := x[j]
			if relu {
				v = max(v, 0)
			}
			k := keep01(key, spec.Col0+j, th)
			bits[j>>6] |= k << (j & 63)
			o[j] = v * scale[k]
		}
	}
}

// ApplyMask applies a recorded mask.
func (d *Native) ApplyMask(dst, src Mat, keep Buffer[uint64], p float64) {
	checkApplyMask(dst, src, keep, p)
	scale := dropScale(p)
	wpr := maskWords(dst.cols)
	for i := range dst.rows {
		o, x, bits := dst.row(i), src.row(i), keep.host[i*wpr:(i+1)*wpr]
		for j := range o {
			o[j] = x[j] * scale[bits[j>>6]>>(j&63)&1]
		}
	}
}

// SumSquares sets ss[i] to the sum of squares of row i.
func (d *Native) SumSquares(ss Buffer[float32], z Mat) {
	z.check("SumSquares", "")
	checkLen("SumSquares ss", ss.Len(), z.rows)
	for i := range z.rows {
		var s float32
		for _, v := range z.row(i) {
			s += v * v
		}
		ss.host[i] = s
	}
}

// RMSNormApply finishes RMSNorm from the global sums of squares.
func (d *Native) RMSNormApply(dst, u Mat, rms Buffer[float32], z Mat, ss, scale Buffer[float32], norm RMSNorm, relu bool) {
	checkRMSNormApply(dst, u, rms, z, ss, scale, norm)
	w := scale.host
	for i := range z.rows {
		r := float32(math.Sqrt(float64(ss.host[i])/float64(norm.N) + norm.Eps))
		rms.host[i] = r
		o, uu, zz := dst.row(i), u.row(i), z.row(i)
		for j := range o {
			uu[j] = zz[j] / r
			v := uu[j] * w[j]
			if relu {
				v = max(v, 0)
			}
			o[j] = v
		}
	}
}

// RMSNormBackwardLocal computes the scale gradient and the row dots.
func (d *Native) RMSNormBackwardLocal(gScale, dot Buffer[float32], da, u Mat, scale Buffer[float32]) {
	checkRMSNormBackwardLocal(gScale, dot, da, u, scale)
	g, w := gScale.host, scale.host
	clear(g)
	for i := range da.rows {
		a, uu := da.row(i), u.row(i)
		var s float32
		for j := range a {
			g[j] += a[j] * uu[j]
			s += a[j] * w[j] * uu[j]
		}
		dot.host[i] = s
	}
}

// RMSNormBackwardFinish computes dz.
func (d *Native) RMSNormBackwardFinish(dz, da, u Mat, scale, dot, rms Buffer[float32], norm RMSNorm) {
	checkRMSNormBackwardFinish(dz, da, u, scale, dot, rms, norm)
	w := scale.host
	inv := 1 / float32(norm.N)
	for i := range da.rows {
		o, a, uu := dz.row(i), da.row(i), u.row(i)
		dt, r := dot.host[i], rms.host[i]
		for j := range o {
			o[j] = (a[j]*w[j] - uu[j]*dt*inv) / r
		}
	}
}

// RowMax sets mx[i] to the maximum of row i.
func (d *Native) RowMax(mx Buffer[float32], x Mat, train Buffer[uint8]) {
	checkRowMax(mx, x, train)
	rowMax(mx, x, train, 0, x.rows)
}

// SoftmaxSums computes the class-axis partials of the loss.
func (d *Native) SoftmaxSums(sums Buffer[float32], x Mat, mx Buffer[float32], labels Buffer[int32], train Buffer[uint8], c0 int) {
	checkSoftmaxSums(sums, x, mx, labels, train, c0)
	softmaxSums(sums, x, mx, labels, train, c0, 0, x.rows)
}

// SoftmaxGrad writes the unscaled gradient and returns the loss sum and count.
func (d *Native) SoftmaxGrad(dl, x Mat, mx, sums Buffer[float32], labels Buffer[int32], train Buffer[uint8], c0 int) (float64, float64) {
	checkSoftmaxGrad(dl, x, mx, sums, labels, train, c0)
	softmaxGradRows(dl, x, mx, sums, labels, train, c0, 0, x.rows)
	return softmaxLoss(mx, sums, train)
}

// ArgMax sets the local first maximum of every row.
func (d *Native) ArgMax(best Buffer[float32], arg Buffer[int64], x Mat, c0 int) {
	checkArgMax(best, arg, x)
	argMax(best, arg, x, c0, 0, x.rows)
}

// ArgMaxSettle drops local maxima that are not global ones.
func (d *Native) ArgMaxSettle(arg Buffer[int64], best, mx Buffer[float32]) {
	argMaxSettle(arg, best, mx)
}

// CountHits counts correct rows per mask.
func (d *Native) CountHits(arg Buffer[int64], labels Buffer[int32], masks [3]Buffer[uint8]) [6]int64 {
	return countHits(arg, labels, masks)
}

// OptimStep updates w, m and v.
func (d *Native) OptimStep(w, g, m, v Buffer[float32], st OptimStep) {
	checkOptim(w, g, m, v, st)
	for k := range w.host {
		w.host[k], m.host[k], v.host[k] = optimUpdate(st, w.host[k], g.host[k], m.host[k], v.host[k])
	}
}

// optimUpdate is gcn's step.update (gcn/optim.go) on one entry, in the
// same float64 operations in the same order, so results are bit-identical.
func optimUpdate(st OptimStep, w32, g32, m32, v32 float32) (float32, float32, float32) {
	w, g, m, v := float64(w32), float64(g32), float64(m32), float64(v32)
	wd := st.WeightDecay
	switch st.Kind {
	case SGD:
		return float32(w - st.LR*(g+wd*w)), m32, v32
	case Adam:
		g += wd * w
	}
	m = st.Beta1*m + (1-st.Beta1)*g
	v = st.Beta2*v + (1-st.Beta2)*g*g
	mh := m / st.Corr1
	vh := v / st.Corr2
	if st.Kind == AdamW {
		w -= st.LR * wd * w
	}
	return float32(w - st.LR*mh/(math.Sqrt(vh)+st.Epsilon)), float32(m), float32(v)
}

// PackBF16 rounds src to bfloat16.
func (d *Native) PackBF16(dst Buffer[uint16], src Buffer[float32]) {
	checkLen("PackBF16 dst", dst.Len(), src.Len())
	for i, f := range src.host {
		dst.host[i] = spmm.ToBF16(f)
	}
}

// UnpackBF16 widens bfloat16 to float32.
func (d *Native) UnpackBF16(dst Buffer[float32], src Buffer[uint16]) {
	checkLen("UnpackBF16 dst", dst.Len(), src.Len())
	for i, h := range src.host {
		dst.host[i] = spmm.FromBF16(h)
	}
}

// GatherRows sets row i of dst to row idx[i] of src.
func (d *Native) GatherRows(dst, src Mat, idx Buffer[int32]) {
	checkGather("GatherRows", dst, src, idx, false)
	gatherRows(dst.view, src.view, idx.host)
}

// ScatterAddRows adds row i of src to row idx[i] of dst.
func (d *Native) ScatterAddRows(dst, src Mat, idx Buffer[int32]) {
	checkGather("ScatterAddRows", dst, src, idx, true)
	for i, r := range idx.host {
		o, x := dst.row(int(r)), src.row(i)
		for j := range o {
			o[j] += x[j]
		}
	}
}

// GatherI32 sets dst[i] = src[idx[i]].
func (d *Native) GatherI32(dst, src, idx Buffer[int32]) {
	checkGather1("GatherI32", dst.Len(), src.Len(), idx)
	for i, r := range idx.host {
		dst.host[i] = src.host[r]
	}
}

// GatherU8 sets dst[i] = src[idx[i]].
func (d *Native) GatherU8(dst, src Buffer[uint8], idx Buffer[int32]) {
	checkGather1("GatherU8", dst.Len(), src.Len(), idx)
	for i, r := range idx.host {
		dst.host[i] = src.host[r]
	}
}
