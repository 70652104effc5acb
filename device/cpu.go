//go:build cgo

package device

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"scalegnn/device/internal/ckern"
	"scalegnn/spmm"
	"scalegnn/spmm/cpu"
)

// CPU is the fast host device: C element-wise kernels (internal/ckern),
// fused where the data allows, split over a fixed pool of worker
// goroutines, a width-specialised C SpMM on the same pool, and spmm/cpu's
// CBLAS GEMM. Results are bit-identical to Native's except GEMM, whose
// sums BLAS orders its own way.
type CPU struct {
	mu   sync.Mutex // one pooled operation at a time: guards job
	pool *pool
	job  cjob
	ljob lossJob
	gjob gatJob
}

var _ Device = (*CPU)(nil)

// NewCPU returns a CPU device with threads workers (<= 0: GOMAXPROCS).
func NewCPU(threads int) *CPU {
	d := &CPU{pool: newPool(threads)}
	// The workers reference only the pool, so the device can become
	// unreachable; then its workers are stopped.
	runtime.AddCleanup(d, func(p *pool) { p.close() }, d.pool)
	return d
}

// Name returns "cpu".
func (d *CPU) Name() string { return "cpu" }

// Describe returns the start-up log line.
func (d *CPU) Describe() string {
	return fmt.Sprintf("cpu (C element-wise kernels, %s, and spmm/cpu's SpMM and sgemm on %d threads)", ckern.ISA(), d.pool.threads())
}

func (d *CPU) memory() deviceMemory { return nil }

// chunksPerThread: SpMM cuts the rows into this many nonzero-balanced
// chunks per thread, handed out dynamically, so that a thread slowed by
// cache misses or by another rank on its core does not hold up the rest.
const chunksPerThread = 4

// UploadCSR validates a, copies it into device memory and cuts its rows
// into chunks of about equal nonzeros for SpMM.
func (d *CPU) UploadCSR(a *spmm.CSR) *CSR {
	c := uploadCSR(a)
	c.bounds = spmm.PartitionRows(c.a, chunksPerThread*d.pool.threads())
	return c
}

// UploadCSRInto makes dst hold a, sharing a's arrays (host memory), and
// re-cuts its chunks into dst's storage: no allocation once dst has held
// a CSR before.
func (d *CPU) UploadCSRInto(dst *CSR, a *spmm.CSR) {
	validateCSR(a)
	dst.a = a
	dst.bounds = spmm.PartitionRowsInto(dst.bounds, a, chunksPerThread*d.pool.threads())
}

// SpMM computes dst = a·b with spmm/cpu's row kernel (width-specialised,
// prefetching, per-ISA) on the device's threads, which take the CSR's
// nonzero-balanced chunks dynamically; the sums are spmm.Native's bit for
// bit.
func (d *CPU) SpMM(dst Mat, a *CSR, b Mat) {
	checkSpMM(dst, a, b)
	if j := d.startSpMM(opSpMM, dst.rows, dst.cols, a); j != nil {
		j.dd, j.ad = dst.dense(), b.dense()
		d.finishSpMM(j, a, dst.cols)
	}
}

// startSpMM starts an SpMM job of op on a's chunks, or returns nil when
// the product of rows×cols is empty.
func (d *CPU) startSpMM(op, rows, cols int, a *CSR) *cjob {
	if rows == 0 || cols == 0 {
		return nil
	}
	bounds := a.bounds
	if bounds == nil { // uploaded by another kind of device
		bounds = []int{0, a.a.Rows}
	}
	j := d.start(op)
	j.csr, j.bounds = a.a, bounds
	j.next.Store(0)
	return j
}

// finishSpMM runs an SpMM job on the device's threads.
func (d *CPU) finishSpMM(j *cjob, a *CSR, cols int) {
	d.finish(j, len(j.bounds)-1, a.NNZ()*cols)
}

// Gemm computes dst = alpha·op(a)·op(b) + beta·dst with spmm/cpu's
// sgemm (CBLAS), cut by cpu.PlanGemm into blocks that run on the device's
// threads: no allocation, no goroutine per call.
func (d *CPU) Gemm(tA, tB spmm.Op, alpha float32, a, b Mat, beta float32, dst Mat) {
	checkGemm(tA, tB, a, b, dst)
	ad, bd, dd := a.dense(), b.dense(), dst.dense()
	pl := cpu.PlanGemm(tA, tB, ad, bd, dd, d.pool.threads())
	if pl.Parts == 0 {
		return
	}
	j := d.start(opGemm)
	j.ad, j.bd, j.dd = ad, bd, dd
	d.runGemm(j, pl, tA, tB, alpha, beta)
}

// runGemm runs the product job j planned by pl, one block per part.
func (d *CPU) runGemm(j *cjob, pl cpu.GemmPlan, tA, tB spmm.Op, alpha, beta float32) {
	j.plan, j.tA, j.tB, j.alpha, j.beta = pl, tA, tB, alpha, beta
	work := 0
	if pl.Parts > 1 {
		work = minParallel // PlanGemm has judged it worth splitting
	}
	d.finish(j, pl.Parts, work)
}

// Operation codes of cjob.
const (
	opFill = iota
	opCopy
	opAdd
	opScale
	opReLU
	opReLUBackward
	opReLURecord
	opReLUBackwardBits
	opDropout
	opApplyMask
	opSumSquares
	opRMSApply
	opRMSDot
	opRMSGScale
	opRMSFinish
	opOptim
	opPack
	opUnpack
	opGather
	opScatter
	opSpMM
	opGemm
	opSpMMBF16
	opSpMMBF16ToBF16
	opSpMMBF16Masked
	opGemmBF16
	opPackMat
	opUnpackMat
	opReLUBackwardBitsBF16
)

// cjob is every pooled operation's arguments in one struct the device
// owns, so handing it to the pool allocates nothing. Mats are passed as
// (first element, stride).
type cjob struct {
	op         int
	d, a, b, c []float32
	e, f, g    []float32
	ldd, lda   int
	ldb, ldc   int
	cols, rows int
	alpha      float32
	n, eps     float64
	relu       bool
	u16, u16b  []uint16
	idx        []int32
	drop       ckern.DropoutArgs
	optim      ckern.OptimArgs
	csr        *spmm.CSR
	bounds     []int
	next       atomic.Int64 // SpMM's next chunk
	pos        []uint64     // SpMMBF16ToBF16Masked's ReLU positions (drop.Keep its keep)
	// products: spmm views of the operands (SpMM: dd = ad·csr... see run)
	dd, ad, bd spmm.Dense
	plan       cpu.GemmPlan
	tA, tB     spmm.Op
	beta       float32
	// bfloat16 operands of the bf16 products (ah, bh) and a bf16 dst (dh)
	ah, bh, dh spmm.DenseBF16
}

// reset clears every field, so the device keeps no buffer alive.
func (j *cjob) reset() { *j = cjob{} }

func (j *cjob) run(lo, hi int) {
	switch j.op {
	case opFill:
		ckern.Fill(j.d, j.ldd, j.cols, j.alpha, lo, hi)
	case opCopy:
		ckern.Copy(j.d, j.ldd, j.a, j.lda, j.cols, lo, hi)
	case opAdd:
		ckern.Add(j.d, j.ldd, j.a, j.lda, j.b, j.ldb, j.cols, lo, hi)
	case opScale:
		ckern.Scale(j.d, j.ldd, j.alpha, j.a, j.lda, j.cols, lo, hi)
	case opReLU:
		ckern.ReLU(j.d, j.ldd, j.a, j.lda, j.cols, lo, hi)
	case opReLUBackward:
		ckern.ReLUBackward(j.d, j.ldd, j.a, j.lda, j.b, j.ldb, j.cols, lo, hi)
	case opReLURecord:
		ckern.ReLURecord(j.d, j.ldd, j.a, j.lda, j.cols, j.drop.Keep, j.drop.WordsPerRow, lo, hi)
	case opReLUBackwardBits:
		ckern.ReLUBackwardBits(j.d, j.ldd, j.a, j.lda, j.cols, j.drop.Keep, j.drop.WordsPerRow, lo, hi)
	case opDropout:
		ckern.Dropout(j.d, j.ldd, j.a, j.lda, j.cols, &j.drop, lo, hi)
	case opApplyMask:
		ckern.ApplyMask(j.d, j.ldd, j.a, j.lda, j.cols, j.drop.Keep, j.drop.WordsPerRow, j.drop.Scale, lo, hi)
	case opSumSquares:
		ckern.SumSquares(j.d, j.a, j.lda, j.cols, lo, hi)
	case opRMSApply:
		// d: dst, b: u, a: z, c: rms, e: ss, f: scale
		ckern.RMSNormApply(j.d, j.ldd, j.b, j.ldb, j.a, j.lda, j.cols, j.c, j.e, j.f, j.n, j.eps, j.relu, lo, hi)
	case opRMSDot:
		// d: dot, a: da, b: u, f: scale
		ckern.RMSNormDot(j.d, j.a, j.lda, j.b, j.ldb, j.f, j.cols, lo, hi)
	case opRMSGScale:
		// d: gScale, a: da, b: u; the range is columns
		ckern.RMSNormGScale(j.d, j.a, j.lda, j.b, j.ldb, j.rows, lo, hi)
	case opRMSFinish:
		// d: dz, a: da, b: u, f: scale, e: dot, c: rms
		ckern.RMSNormFinish(j.d, j.ldd, j.a, j.lda, j.b, j.ldb, j.cols, j.f, j.e, j.c, j.alpha, lo, hi)
	case opOptim:
		// d: w, a: g, b: m, c: v
		ckern.Optim(j.d, j.a, j.b, j.c, &j.optim, lo, hi)
	case opPack:
		ckern.PackBF16(j.u16, j.a, lo, hi)
	case opUnpack:
		ckern.UnpackBF16(j.d, j.u16, lo, hi)
	case opGather:
		ckern.GatherRows(j.d, j.ldd, j.a, j.lda, j.cols, j.idx, lo, hi)
	case opScatter:
		ckern.ScatterAddRows(j.d, j.ldd, j.a, j.lda, j.rows, j.idx, lo, hi)
	case opSpMM, opSpMMBF16, opSpMMBF16ToBF16, opSpMMBF16Masked:
		// Every worker takes chunks until none is left; lo and hi only
		// say that this worker has a share.
		for {
			k := int(j.next.Add(1) - 1)
			if k >= len(j.bounds)-1 {
				return
			}
			j.spmmChunk(j.bounds[k], j.bounds[k+1])
		}
	case opGemm:
		// dd = alpha·op(ad)·op(bd) + beta·dd, blocks [lo, hi) of the plan.
		for p := lo; p < hi; p++ {
			cpu.GemmPart(j.plan, p, j.tA, j.tB, j.alpha, j.ad, j.bd, j.beta, j.dd)
		}
	case opGemmBF16:
		// dd = alpha·op(ah)·op(bh) + beta·dd
		for p := lo; p < hi; p++ {
			cpu.GemmPartBF16(j.plan, p, j.tA, j.tB, j.alpha, j.ah, j.bh, j.beta, j.dd)
		}
	case opPackMat:
		// u16 (stride ldd) = a (stride lda)
		ckern.PackBF16Mat(j.u16, j.ldd, j.a, j.lda, j.cols, lo, hi)
	case opUnpackMat:
		// d (stride ldd) = u16 (stride lda)
		ckern.UnpackBF16Mat(j.d, j.ldd, j.u16, j.lda, j.cols, lo, hi)
	case opReLUBackwardBitsBF16:
		// u16 (stride ldd) = u16b (stride lda) where the bit is set
		ckern.ReLUBackwardBitsBF16(j.u16, j.ldd, j.u16b, j.lda, j.cols, j.drop.Keep, j.drop.WordsPerRow, lo, hi)
	}
}

// spmmChunk computes rows [r0, r1) of an SpMM job's product: dd = csr·ad
// (float32), dd = csr·bh (bf16 b) or dh = csr·bh (bf16 b and dst).
func (j *cjob) spmmChunk(r0, r1 int) {
	switch j.op {
	case opSpMM:
		cpu.SpMMRows(j.dd, j.csr, j.ad, r0, r1)
	case opSpMMBF16:
		cpu.SpMMRowsBF16(j.dd, j.csr, j.bh, r0, r1)
	case opSpMMBF16Masked:
		cpu.SpMMRowsBF16Masked(j.dh, j.csr, j.bh, j.drop.Keep, j.pos, j.drop.Scale, r0, r1)
	default:
		cpu.SpMMRowsBF16(j.dh, j.csr, j.bh, r0, r1)
	}
}

// start locks the device and returns its job, reset, with op set.
func (d *CPU) start(op int) *cjob {
	d.mu.Lock()
	j := &d.job
	j.reset()
	j.op = op
	return j
}

// finish runs the job over [0, total) and releases the job's slices.
func (d *CPU) finish(j *cjob, total, work int) {
	d.pool.run(j, total, work)
	j.reset()
	d.mu.Unlock()
}

// rowsJob runs a row-wise job with dst d and up to three operands.
func (d *CPU) rowsJob(op int, dst Mat, ops ...Mat) *cjob {
	j := d.start(op)
	j.d, j.ldd, j.cols, j.rows = dst.data(), dst.strid, dst.cols, dst.rows
	for k, m := range ops {
		switch k {
		case 0:
			j.a, j.lda = m.data(), m.strid
		case 1:
			j.b, j.ldb = m.data(), m.strid
		}
	}
	return j
}

func (d *CPU) runRows(j *cjob) {
	rows := j.rows
	if j.cols == 0 {
		rows = 0
	}
	d.finish(j, rows, j.rows*j.cols)
}

// Fill sets every element of dst to v.
func (d *CPU) Fill(dst Mat, v float32) {
	dst.check("Fill", "")
	j := d.rowsJob(opFill, dst)
	j.alpha = v
	d.runRows(j)
}

// Copy copies src into dst.
func (d *CPU) Copy(dst, src Mat) {
	checkSame("Copy", dst, src)
	d.runRows(d.rowsJob(opCopy, dst, src))
}

// Add computes dst = a + b.
func (d *CPU) Add(dst, a, b Mat) {
	checkSame("Add", dst, a, b)
	d.runRows(d.rowsJob(opAdd, dst, a, b))
}

// Scale computes dst = alpha·a.
func (d *CPU) Scale(dst Mat, alpha float32, a Mat) {
	checkSame("Scale", dst, a)
	j := d.rowsJob(opScale, dst, a)
	j.alpha = alpha
	d.runRows(j)
}

// ReLU computes dst = max(a, 0).
func (d *CPU) ReLU(dst, a Mat) {
	checkSame("ReLU", dst, a)
	d.runRows(d.rowsJob(opReLU, dst, a))
}

// ReLUBackward computes dst = grad where act > 0, else 0.
func (d *CPU) ReLUBackward(dst, grad, act Mat) {
	checkSame("ReLUBackward", dst, grad, act)
	d.runRows(d.rowsJob(opReLUBackward, dst, grad, act))
}

// ReLURecord computes dst = max(a, 0) and records where dst > 0.
func (d *CPU) ReLURecord(dst, a Mat, pos Buffer[uint64]) {
	checkReLUBits("ReLURecord", "ReLURecord pos", dst, a, pos)
	j := d.rowsJob(opReLURecord, dst, a)
	j.drop.Keep, j.drop.WordsPerRow = pos.host, maskWords(dst.cols)
	d.runRows(j)
}

// ReLUBackwardBits computes dst = grad where pos has the bit, else 0.
func (d *CPU) ReLUBackwardBits(dst, grad Mat, pos Buffer[uint64]) {
	checkReLUBits("ReLUBackwardBits", "ReLUBackwardBits pos", dst, grad, pos)
	j := d.rowsJob(opReLUBackwardBits, dst, grad)
	j.drop.Keep, j.drop.WordsPerRow = pos.host, maskWords(dst.cols)
	d.runRows(j)
}

func (d *CPU) dropout(dst, src Mat, keep []uint64, spec *Dropout, relu bool) {
	j := d.rowsJob(opDropout, dst, src)
	j.drop = ckern.DropoutArgs{Verts: spec.Verts.host, Seed: spec.Seed, Step: spec.Step, Site: spec.Site,
		Col0: spec.Col0, Threshold: dropThreshold(spec.P), Scale: dropScale(spec.P)[1],
		Keep: keep, WordsPerRow: maskWords(dst.cols), ReLU: relu}
	d.runRows(j)
}

// Dropout applies spec's mask to src without recording it.
func (d *CPU) Dropout(dst, src Mat, spec Dropout) {
	checkDropout("Dropout", dst, src, nil, &spec)
	d.dropout(dst, src, nil, &spec, false)
}

// DropoutRecord applies spec's mask to src and records it in keep.
func (d *CPU) DropoutRecord(dst, src Mat, keep Buffer[uint64], spec Dropout) {
	checkDropout("DropoutRecord", dst, src, &keep, &spec)
	d.dropout(dst, src, keep.host, &spec, false)
}

// ReLUDropoutRecord applies max(·, 0) and spec's mask, recording it.
func (d *CPU) ReLUDropoutRecord(dst, src Mat, keep Buffer[uint64], spec Dropout) {
	checkDropout("ReLUDropoutRecord", dst, src, &keep, &spec)
	d.dropout(dst, src, keep.host, &spec, true)
}

// ApplyMask applies a recorded mask.
func (d *CPU) ApplyMask(dst, src Mat, keep Buffer[uint64], p float64) {
	checkApplyMask(dst, src, keep, p)
	j := d.rowsJob(opApplyMask, dst, src)
	j.drop.Keep, j.drop.WordsPerRow, j.drop.Scale = keep.host, maskWords(dst.cols), dropScale(p)[1]
	d.runRows(j)
}

// SumSquares sets ss[i] to the sum of squares of row i.
func (d *CPU) SumSquares(ss Buffer[float32], z Mat) {
	z.check("SumSquares", "")
	checkLen("SumSquares ss", ss.Len(), z.rows)
	j := d.start(opSumSquares)
	j.d, j.a, j.lda, j.cols = ss.host, z.data(), z.strid, z.cols
	d.finish(j, z.rows, z.rows*z.cols)
}

// RMSNormApply finishes RMSNorm, with the ReLU fused when relu is set.
func (d *CPU) RMSNormApply(dst, u Mat, rms Buffer[float32], z Mat, ss, scale Buffer[float32], norm RMSNorm, relu bool) {
	checkRMSNormApply(dst, u, rms, z, ss, scale, norm)
	j := d.rowsJob(opRMSApply, dst, z, u)
	j.c, j.e, j.f, j.n, j.eps, j.relu = rms.host, ss.host, scale.host, float64(norm.N), norm.Eps, relu
	d.finish(j, z.rows, z.rows*z.cols) // rms is written even for rows of no columns
}

// RMSNormBackwardLocal computes the scale gradient (columns split over
// the workers, rows summed in order) and the row dots (rows split).
func (d *CPU) RMSNormBackwardLocal(gScale, dot Buffer[float32], da, u Mat, scale Buffer[float32]) {
	checkRMSNormBackwardLocal(gScale, dot, da, u, scale)
	j := d.rowsJob(opRMSDot, da, da, u)
	j.d, j.f = dot.host, scale.host
	d.finish(j, da.rows, da.rows*da.cols)
	j = d.rowsJob(opRMSGScale, da, da, u)
	j.d = gScale.host
	// Column blocks of at least 16 floats keep workers off each other's
	// cache lines.
	d.finish(j, da.cols, min(da.rows*da.cols, da.cols/16*minParallel))
}

// RMSNormBackwardFinish computes dz.
func (d *CPU) RMSNormBackwardFinish(dz, da, u Mat, scale, dot, rms Buffer[float32], norm RMSNorm) {
	checkRMSNormBackwardFinish(dz, da, u, scale, dot, rms, norm)
	j := d.rowsJob(opRMSFinish, dz, da, u)
	j.f, j.e, j.c, j.alpha = scale.host, dot.host, rms.host, 1/float32(norm.N)
	d.runRows(j)
}

// RowMax sets mx[i] to the maximum of row i (Go, see loss.go).
func (d *CPU) RowMax(mx Buffer[float32], x Mat, train Buffer[uint8]) {
	checkRowMax(mx, x, train)
	d.runLoss(&lossJob{op: lossRowMax, mx: mx, x: x, train: train}, 1)
}

// SoftmaxSums computes the class-axis partials of the loss (Go).
func (d *CPU) SoftmaxSums(sums Buffer[float32], x Mat, mx Buffer[float32], labels Buffer[int32], train Buffer[uint8], c0 int) {
	checkSoftmaxSums(sums, x, mx, labels, train, c0)
	d.runLoss(&lossJob{op: lossSums, sums: sums, x: x, mx: mx, labels: labels, train: train, c0: c0}, expCost)
}

// SoftmaxGrad writes the unscaled gradient, rows split over the threads,
// and returns loss sum and count, summed in row order (Go).
func (d *CPU) SoftmaxGrad(dl, x Mat, mx, sums Buffer[float32], labels Buffer[int32], train Buffer[uint8], c0 int) (float64, float64) {
	checkSoftmaxGrad(dl, x, mx, sums, labels, train, c0)
	d.runLoss(&lossJob{op: lossGrad, d: dl, x: x, mx: mx, sums: sums, labels: labels, train: train, c0: c0}, expCost)
	return softmaxLoss(mx, sums, train)
}

// ArgMax sets the local first maximum of every row (Go).
func (d *CPU) ArgMax(best Buffer[float32], arg Buffer[int64], x Mat, c0 int) {
	checkArgMax(best, arg, x)
	d.runLoss(&lossJob{op: lossArgMax, mx: best, arg: arg, x: x, c0: c0}, 1)
}

// ArgMaxSettle drops local maxima that are not global ones (Go).
func (d *CPU) ArgMaxSettle(arg Buffer[int64], best, mx Buffer[float32]) {
	argMaxSettle(arg, best, mx)
}

// CountHits counts correct rows per mask (Go).
func (d *CPU) CountHits(arg Buffer[int64], labels Buffer[int32], masks [3]Buffer[uint8]) [6]int64 {
	return countHits(arg, labels, masks)
}

// OptimStep updates w, m and v in one pass.
func (d *CPU) OptimStep(w, g, m, v Buffer[float32], st OptimStep) {
	checkOptim(w, g, m, v, st)
	j := d.start(opOptim)
	j.d, j.a, j.b, j.c = w.host, g.host, m.host, v.host
	j.optim = ckern.OptimArgs{Kind: st.Kind, LR: st.LR, WD: st.WeightDecay, Beta1: st.Beta1, Beta2: st.Beta2,
		Eps: st.Epsilon, Corr1: st.Corr1, Corr2: st.Corr2}
	// sqrt and two divisions per element: worth splitting earlier.
	d.finish(j, w.Len(), 4*w.Len())
}

// PackBF16 rounds src to bfloat16.
func (d *CPU) PackBF16(dst Buffer[uint16], src Buffer[float32]) {
	checkLen("PackBF16 dst", dst.Len(), src.Len())
	j := d.start(opPack)
	j.u16, j.a = dst.host, src.host
	d.finish(j, src.Len(), src.Len())
}

// UnpackBF16 widens bfloat16 to float32.
func (d *CPU) UnpackBF16(dst Buffer[float32], src Buffer[uint16]) {
	checkLen("UnpackBF16 dst", dst.Len(), src.Len())
	j := d.start(opUnpack)
	j.d, j.u16 = dst.host, src.host
	d.finish(j, src.Len(), src.Len())
}

// GatherRows sets row i of dst to row idx[i] of src.
func (d *CPU) GatherRows(dst, src Mat, idx Buffer[int32]) {
	checkGather("GatherRows", dst, src, idx, false)
	j := d.rowsJob(opGather, dst, src)
	j.idx = idx.host
	d.runRows(j)
}

// ScatterAddRows adds row i of src to row idx[i] of dst; the workers
// split the columns, so every element's sum runs over the rows in order
// whatever idx repeats.
func (d *CPU) ScatterAddRows(dst, src Mat, idx Buffer[int32]) {
	checkGather("ScatterAddRows", dst, src, idx, true)
	j := d.rowsJob(opScatter, dst, src)
	j.idx, j.rows = idx.host, src.rows
	cols := dst.cols
	if src.rows == 0 {
		cols = 0
	}
	d.finish(j, cols, min(src.rows*cols, cols/16*minParallel))
}

// GatherI32 sets dst[i] = src[idx[i]].
func (d *CPU) GatherI32(dst, src, idx Buffer[int32]) {
	checkGather1("GatherI32", dst.Len(), src.Len(), idx)
	for i, r := range idx.host {
		dst.host[i] = src.host[r]
	}
}

// GatherU8 sets dst[i] = src[idx[i]].
func (d *CPU) GatherU8(dst, src Buffer[uint8], idx Buffer[int32]) {
	checkGather1("GatherU8", dst.Len(), src.Len(), idx)
	for i, r := range idx.host {
		dst.host[i] = src.host[r]
	}
}
