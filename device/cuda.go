//go:build cgo

package device

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"scalegnn/device/internal/cuda"
	"scalegnn/internal/counter"
	"scalegnn/spmm"
)

// CUDA is the GPU device: buffers in the GPU's memory, SpMM through
// cuSPARSE (CSR, 32-bit indices, row-major dense operands; the transposed
// product from the stored transposed shard, as on the host), GEMM through
// cuBLAS (TF32 off unless asked for), and everything else in its own
// kernels (cuda_kernels.cu), all on one stream. It waits for the GPU only
// where a host value is needed: Download, the loss and hit counts, and
// the collectives, which stage through pinned host memory unless the
// communicator is GPU-aware (cuda_collective.go).
//
// Its element-wise results are Native's bit for bit (the kernels are
// compiled without contraction, with IEEE division and square roots, and
// sum in Go's order), except where exp and log enter (the loss: CUDA's
// and Go's may differ in the last bit) and GEMM and SpMM, whose sums the
// libraries order. Operations are deterministic: the same inputs give the
// same bits on every run and on every replica.
type CUDA struct {
	ctx     *cuda.Ctx
	ordinal int
	info    cuda.Info
	tf32    bool
	fn      [numKernels]cuda.Func
	kernels string // how the kernels were obtained, for Describe
	alg     int    // cuSPARSE SpMM algorithm
	algBF16 int    // the same for the bfloat16 SpMM, which may refuse it alone

	mu      sync.Mutex // guards the library handles' use and the scratch below
	work    *gpuBlock  // cuSPARSE's workspace
	small   Buffer[uint64]
	terms   Buffer[uint64]
	gatPart Buffer[float32] // HeadDotGrad's per-chunk partial sums
	idxHost []int32         // downloaded indices for the checks
	// rowsHost and rowsDev: spmmBF16Rows's row offsets, rebased to 0.
	rowsHost []int32
	rowsDev  Buffer[int32]
	// maskMu guards maskScratch, SpMMBF16ToBF16Masked's float32 blocks.
	maskMu      sync.Mutex
	maskScratch Buffer[float32]

	stage stagingPool // pinned host memory for the collectives

	// launchHook, when set, receives every launch instead of the GPU: the
	// host-side tests run the kernels' source under an emulator with it.
	// The arguments go by value, so that they do not escape to the heap.
	launchHook func(k kern, gx, gy, bx, by uint32, args [cuda.MaxArgs]uint64, n int)
	// gatRowThreads keeps the GAT row reductions on their
	// thread-per-(row, head) kernels (cuda_gat.go's rowReduce): the
	// emulator test sets it, since it runs a kernel's threads one by one
	// and cannot emulate warp shuffles.
	gatRowThreads bool
}

var _ Device = (*CUDA)(nil)

// CUDAError is the panic value of a CUDA call that fails inside an
// operation (which returns no error): a fault on the GPU, not bad input.
type CUDAError struct {
	Op  string
	Err error
}

func (e *CUDAError) Error() string { return fmt.Sprintf("device: cuda %s: %v", e.Op, e.Err) }

func (e *CUDAError) Unwrap() error { return e.Err }

func init() {
	cudaDevices = func() (int, error) {
		n, err := cuda.Count()
		if err != nil {
			return 0, noCUDA(err)
		}
		if n == 0 {
			return 0, fmt.Errorf("%w: no CUDA GPU is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES)", ErrNoCUDA)
		}
		return n, nil
	}
	openCUDA = func(opt CUDAOptions) (Device, error) { return NewCUDA(opt) }
}

// noCUDA wraps a missing library, symbol or GPU in ErrNoCUDA.
func noCUDA(err error) error {
	var m *cuda.MissingError
	if errors.As(err, &m) {
		return fmt.Errorf("%w: %v", ErrNoCUDA, err)
	}
	return err
}

// images caches the compiled kernels per architecture, so that ranks
// opened in one process (in-process tests) compile once.
var images = struct {
	sync.Mutex
	m map[string]imageEntry
}{m: map[string]imageEntry{}}

type imageEntry struct {
	image []byte
	how   string
}

// NewCUDA opens GPU opt.Ordinal.
func NewCUDA(opt CUDAOptions) (*CUDA, error) {
	if _, err := cudaDevices(); err != nil {
		return nil, err
	}
	info, err := cuda.DeviceInfo(opt.Ordinal)
	if err != nil {
		return nil, noCUDA(err)
	}
	ctx, err := cuda.Open(opt.Ordinal, opt.TF32)
	if err != nil {
		return nil, noCUDA(err)
	}
	d := &CUDA{ctx: ctx, ordinal: opt.Ordinal, info: info, tf32: opt.TF32, alg: cuda.SpMMCSRAlg2}
	if s := os.Getenv("SCALEGNN_CUSPARSE_SPMM_ALG"); s != "" {
		// For tuning: cusparseSpMMAlg_t's value (0 default, 4, 6, 12).
		if v, err := strconv.Atoi(s); err == nil {
			d.alg = v
		}
	}
	d.algBF16 = d.alg
	key := fmt.Sprintf("sm_%d%d|%s", info.Major, info.Minor, opt.CacheDir)
	images.Lock()
	e, ok := images.m[key]
	if !ok {
		e.image, e.how, err = kernelImage(info.Major, info.Minor, opt.CacheDir)
		if err == nil {
			images.m[key] = e
		}
	}
	images.Unlock()
	if err != nil {
		ctx.Close()
		return nil, err
	}
	d.kernels = e.how
	mod, err := ctx.LoadModule(e.image)
	if err != nil {
		ctx.Close()
		return nil, err
	}
	for k := range numKernels {
		if d.fn[k], err = ctx.Function(mod, kernelNames[k]); err != nil {
			ctx.Close()
			return nil, err
		}
	}
	d.small = Alloc[uint64](d, 8)
	d.stage.ctx = ctx
	return d, nil
}

// Name returns "cuda".
func (d *CUDA) Name() string { return "cuda" }

// Describe returns the start-up log line.
func (d *CUDA) Describe() string {
	tf := "off"
	if d.tf32 {
		tf = "on"
	}
	return fmt.Sprintf("cuda (GPU %d: %s, sm_%d%d, %d SMs, %s; cuBLAS GEMM with TF32 %s, cuSPARSE SpMM algorithm %d; kernels %s; libraries %v)",
		d.ordinal, d.info.Name, d.info.Major, d.info.Minor, d.info.SMs, fmtBytes(d.info.Total), tf, d.alg, d.kernels, cuda.Loaded())
}

func fmtBytes(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

func (d *CUDA) memory() deviceMemory { return d }

// memoryInfo returns the GPU's free and total memory.
func (d *CUDA) memoryInfo() (int64, int64) {
	f, t, err := d.ctx.MemInfo()
	if err != nil {
		d.fail("cuMemGetInfo", err)
	}
	return f, t
}

// Sync waits for the work queued on the device (for timing).
func (d *CUDA) Sync() {
	if err := d.ctx.Sync(); err != nil {
		d.fail("synchronize", err)
	}
}

func (d *CUDA) fail(op string, err error) { panic(&CUDAError{Op: op, Err: err}) }

// alloc returns zeroed device memory, freed by Free or by a cleanup once
// no Buffer refers to it (after the work queued on it: freeing waits for
// the stream first). The garbage collector does not see the GPU's memory,
// so an allocation that fails first collects and waits for the cleanups
// of dead buffers before it reports the GPU out of memory.
func (d *CUDA) alloc(bytes int64) *gpuBlock {
	if bytes == 0 {
		return &gpuBlock{}
	}
	p, err := d.ctx.Alloc(bytes)
	for wait := time.Millisecond; err != nil && isOOM(err) && wait < time.Second; wait *= 2 {
		runtime.GC()
		time.Sleep(wait) // the cleanups run on their own goroutine
		p, err = d.ctx.Alloc(bytes)
	}
	if err != nil {
		if isOOM(err) {
			free, total, _ := d.ctx.MemInfo()
			panic(&OutOfMemoryError{Bytes: bytes, Free: free, Total: total, Device: fmt.Sprintf("GPU %d (%s)", d.ordinal, d.info.Name)})
		}
		d.fail("cuMemAlloc", err)
	}
	if err := d.ctx.Memset(p, bytes); err != nil {
		d.fail("cuMemsetD8Async", err)
	}
	ctx := d.ctx
	m := &gpuMemory{ptr: p, free: func(p uintptr) {
		_ = ctx.Sync()
		_ = ctx.Free(p)
	}}
	b := &gpuBlock{ptr: p, bytes: bytes, mem: m}
	runtime.AddCleanup(b, func(m *gpuMemory) { m.release() }, m)
	return b
}

func isOOM(err error) bool {
	var ce *cuda.Error
	return errors.As(err, &ce) && ce.Code == cuda.OutOfMemory
}

func (d *CUDA) h2d(dst uintptr, src unsafe.Pointer, bytes int64) {
	if err := d.ctx.H2D(dst, src, bytes, true); err != nil {
		d.fail("upload", err)
	}
}

func (d *CUDA) d2h(dst unsafe.Pointer, src uintptr, bytes int64) {
	if err := d.ctx.D2H(dst, src, bytes); err != nil {
		d.fail("download", err)
	}
}

// addr is the device address of the view's first element (0 for a
// view of an empty buffer).
func (m view[T]) addr() uintptr {
	if m.buf.blk == nil {
		return 0
	}
	return m.buf.addr(m.off)
}

// ld is the view's leading dimension as the libraries take it (>= 1).
func (m view[T]) ld() int { return max(m.strid, 1) }

// Kernel arguments: 8-byte slots.
func argMat(m Mat) uint64 { return uint64(m.addr()) }

func argBuf[T Elem](b Buffer[T]) uint64 {
	if b.blk == nil {
		return 0
	}
	return uint64(b.addr(0))
}

func argInt(v int) uint64     { return uint64(int64(v)) }
func argF32(v float32) uint64 { return uint64(math.Float32bits(v)) }
func argF64(v float64) uint64 { return math.Float64bits(v) }
func argBool(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}
func ceilDiv(a, b int) int       { return (a + b - 1) / b }
func clampGrid(n, hi int) uint32 { return uint32(max(1, min(n, hi))) }

// launch queues kernel k on a gx×gy grid of bx×by blocks.
func (d *CUDA) launch(k kern, gx, gy, bx, by uint32, args ...uint64) {
	var a [cuda.MaxArgs]uint64
	n := copy(a[:], args)
	if d.launchHook != nil {
		d.launchHook(k, gx, gy, bx, by, a, n)
		return
	}
	if err := d.ctx.Launch(d.fn[k], gx, gy, bx, by, 0, &a, n); err != nil {
		d.fail(kernelNames[k], err)
	}
}

// run2 launches an element-wise kernel over rows×cols: 32×8 blocks.
func (d *CUDA) run2(k kern, rows, cols int, args ...uint64) {
	if rows == 0 || cols == 0 {
		return
	}
	d.launch(k, clampGrid(ceilDiv(cols, 32), 1024), clampGrid(ceilDiv(rows, 8), 65535), 32, 8, args...)
}

// runFlat launches an element-wise kernel whose result does not depend
// on an element's row and column, over operands that are all contiguous,
// as one row of rows·cols elements on blocks of 256 threads: each warp
// then reads 128 contiguous bytes per operand and no thread idles.
func (d *CUDA) runFlat(k kern, rows, cols int, ops []Mat, args ...uint64) {
	if rows == 0 || cols == 0 {
		return
	}
	for _, m := range ops {
		if !m.contiguous() {
			d.run2(k, rows, cols, args...)
			return
		}
	}
	// The kernels' last two arguments are rows and cols; their strides
	// no longer matter with one row.
	n := rows * cols
	args[len(args)-2], args[len(args)-1] = 1, argInt(n)
	d.launch(k, clampGrid(ceilDiv(n, 256), 1<<20), 1, 256, 1, args...)
}

// runWords launches a bit-mask kernel: a warp per row and 64-column word.
func (d *CUDA) runWords(k kern, rows, cols int, args ...uint64) {
	if rows == 0 || cols == 0 {
		return
	}
	d.launch(k, clampGrid(maskWords(cols), 65535), clampGrid(ceilDiv(rows, 8), 65535), 32, 8, args...)
}

// run1 launches a kernel with a thread per element (or per row).
func (d *CUDA) run1(k kern, n int, args ...uint64) {
	if n == 0 {
		return
	}
	d.launch(k, clampGrid(ceilDiv(n, 256), 1<<20), 1, 256, 1, args...)
}

// UploadCSR copies a into device memory with 32-bit offsets.
func (d *CUDA) UploadCSR(a *spmm.CSR) *CSR {
	c := &CSR{}
	d.UploadCSRInto(c, a)
	return c
}

// UploadCSRInto copies a into dst's device memory, reusing it when large
// enough; a may change once it returns.
func (d *CUDA) UploadCSRInto(dst *CSR, a *spmm.CSR) {
	nnz := validateCSR(a)
	if nnz > math.MaxInt32 || a.Rows >= math.MaxInt32 {
		shapePanic("UploadCSR: %d×%d with %d nonzeros is beyond the CUDA device's 32-bit indices; use more ranks", a.Rows, a.Cols, nnz)
	}
	if dst.g == nil {
		dst.a, dst.bounds, dst.g = nil, nil, &gpuCSR{}
	}
	g := dst.g
	g.rows, g.cols, g.nnz = a.Rows, a.Cols, int(nnz)
	if cap(g.rp32) < a.Rows+1 {
		g.rp32 = make([]int32, a.Rows+1)
	}
	g.rp32 = g.rp32[:a.Rows+1]
	for i, p := range a.RowPtr {
		g.rp32[i] = int32(p)
	}
	reuseInto(d, &g.rowPtr, g.rp32)
	reuseInto(d, &g.colIdx, a.ColIdx[:nnz])
	reuseInto(d, &g.val, a.Val[:nnz])
	g.val16ok = false
}

// reuseInto uploads src into *b, growing it (by half again) when too small.
func reuseInto[T Elem](d *CUDA, b *Buffer[T], src []T) {
	reuseBuf(d, b, len(src))
	Upload[T](d, *b, 0, src)
}

// reuseBuf makes *b n elements long, reusing its memory when large
// enough and else allocating half again as much.
func reuseBuf[T Elem](d *CUDA, b *Buffer[T], n int) {
	need := int64(n) * elemSize[T]()
	if b.blk == nil || b.off != 0 || b.blk.bytes < need {
		*b = Buffer[T]{blk: d.alloc(need + need/2)}
	}
	b.n, b.shadow = n, nil
}

// SpMM computes dst = a·b with cuSPARSE.
func (d *CUDA) SpMM(dst Mat, a *CSR, b Mat) {
	checkSpMM(dst, a, b)
	if dst.rows == 0 || dst.cols == 0 {
		return
	}
	if a.NNZ() == 0 {
		d.Fill(dst, 0)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	g := a.g
	d.spmm(g.rows, g.cols, g.nnz, g.rowPtr.addr(0), g.colIdx.addr(0), g.val.addr(0), dst.cols, b.addr(), b.ld(), dst.addr(), dst.ld(), cuda.SpMMTypes{A: cuda.R32F, B: cuda.R32F, C: cuda.R32F}, &d.alg)
}

// spmm runs cuSPARSE's SpMM of the rows×cols CSR of nnz entries at
// rowPtr, colIdx and val (a gpuCSR's, or a range of its rows) on n
// columns, growing the shared workspace as it asks; *alg is the
// algorithm, set to cuSPARSE's default for good when it refuses the
// operands. The caller holds d.mu.
func (d *CUDA) spmm(rows, cols, nnz int, rowPtr, colIdx, val uintptr, n int, b uintptr, ldb int, c uintptr, ldc int, types cuda.SpMMTypes, alg *int) {
	for range 3 {
		var work uintptr
		var size int64
		if d.work != nil {
			work, size = d.work.ptr, d.work.bytes
		}
		need, err := d.ctx.SpMM(rows, cols, nnz, rowPtr, colIdx, val,
			n, b, ldb, c, ldc, types, *alg, work, size)
		if err != nil {
			if *alg != cuda.SpMMDefault {
				// An algorithm that refuses these operands (alignment,
				// strides): fall back to cuSPARSE's default for good.
				*alg = cuda.SpMMDefault
				continue
			}
			d.fail("SpMM", err)
		}
		if need == 0 {
			return
		}
		d.work = d.alloc(need)
	}
	d.fail("SpMM", errors.New("cuSPARSE's workspace kept growing"))
}

// Gemm computes dst = alpha·op(a)·op(b) + beta·dst with cuBLAS's Sgemm.
func (d *CUDA) Gemm(tA, tB spmm.Op, alpha float32, a, b Mat, beta float32, dst Mat) {
	checkGemm(tA, tB, a, b, dst)
	k, ok := d.gemmEmpty(tA, a.rows, a.cols, beta, dst)
	if !ok {
		return
	}
	d.gemm("Gemm", d.ctx.Sgemm, tA, tB, k, alpha, a.addr(), a.ld(), b.addr(), b.ld(), beta, dst)
}

// gemm runs the library product call (cuBLAS, column-major) for the
// row-major dst = alpha·op(a)·op(b) + beta·dst with inner dimension k:
// the column-major product of the transposes, so the operands go
// swapped.
func (d *CUDA) gemm(name string, call func(ta, tb bool, m, n, k int, alpha float32, a uintptr, lda int, b uintptr, ldb int, beta float32, c uintptr, ldc int) error,
	tA, tB spmm.Op, k int, alpha float32, a uintptr, lda int, b uintptr, ldb int, beta float32, dst Mat) {
	d.mu.Lock()
	err := call(tB == spmm.Trans, tA == spmm.Trans, dst.cols, dst.rows, k, alpha, b, ldb, a, lda, beta, dst.addr(), dst.ld())
	d.mu.Unlock()
	if err != nil {
		d.fail(name, err)
	}
}

// gemmEmpty returns the inner dimension of a product into dst whose a
// is aRows×aCols, and whether the library is needed: an empty dst needs
// nothing, and an empty inner dimension only dst = beta·dst (cuBLAS
// would refuse its zero leading dimensions).
func (d *CUDA) gemmEmpty(tA spmm.Op, aRows, aCols int, beta float32, dst Mat) (int, bool) {
	k := aCols
	if tA == spmm.Trans {
		k = aRows
	}
	if dst.rows == 0 || dst.cols == 0 {
		return k, false
	}
	if k == 0 {
		if beta == 0 {
			d.Fill(dst, 0)
		} else {
			d.Scale(dst, beta, dst)
		}
		return k, false
	}
	return k, true
}

// Fill sets every element of dst to v.
func (d *CUDA) Fill(dst Mat, v float32) {
	dst.check("Fill", "")
	d.runFlat(kFill, dst.rows, dst.cols, []Mat{dst}, argMat(dst), argInt(dst.strid), argF32(v), argInt(dst.rows), argInt(dst.cols))
}

// Copy copies src into dst.
func (d *CUDA) Copy(dst, src Mat) {
	checkSame("Copy", dst, src)
	d.runFlat(kCopy, dst.rows, dst.cols, []Mat{dst, src}, argMat(dst), argInt(dst.strid), argMat(src), argInt(src.strid), argInt(dst.rows), argInt(dst.cols))
}

// Add computes dst = a + b.
func (d *CUDA) Add(dst, a, b Mat) {
	checkSame("Add", dst, a, b)
	d.runFlat(kAdd, dst.rows, dst.cols, []Mat{dst, a, b}, argMat(dst), argInt(dst.strid), argMat(a), argInt(a.strid), argMat(b), argInt(b.strid),
		argInt(dst.rows), argInt(dst.cols))
}

// Scale computes dst = alpha·a.
func (d *CUDA) Scale(dst Mat, alpha float32, a Mat) {
	checkSame("Scale", dst, a)
	d.runFlat(kScale, dst.rows, dst.cols, []Mat{dst, a}, argMat(dst), argInt(dst.strid), argF32(alpha), argMat(a), argInt(a.strid), argInt(dst.rows), argInt(dst.cols))
}

// ReLU computes dst = max(a, 0).
func (d *CUDA) ReLU(dst, a Mat) {
	checkSame("ReLU", dst, a)
	d.runFlat(kReLU, dst.rows, dst.cols, []Mat{dst, a}, argMat(dst), argInt(dst.strid), argMat(a), argInt(a.strid), argInt(dst.rows), argInt(dst.cols))
}

// ReLUBackward computes dst = grad where act > 0, else 0.
func (d *CUDA) ReLUBackward(dst, grad, act Mat) {
	checkSame("ReLUBackward", dst, grad, act)
	d.runFlat(kReLUBackward, dst.rows, dst.cols, []Mat{dst, grad, act}, argMat(dst), argInt(dst.strid), argMat(grad), argInt(grad.strid), argMat(act), argInt(act.strid),
		argInt(dst.rows), argInt(dst.cols))
}

// ReLURecord computes dst = max(a, 0) and records where dst > 0.
func (d *CUDA) ReLURecord(dst, a Mat, pos Buffer[uint64]) {
	checkReLUBits("ReLURecord", "ReLURecord pos", dst, a, pos)
	d.runWords(kReLURecord, dst.rows, dst.cols, argMat(dst), argInt(dst.strid), argMat(a), argInt(a.strid), argBuf(pos),
		argInt(maskWords(dst.cols)), argInt(dst.rows), argInt(dst.cols))
}

// ReLUBackwardBits computes dst = grad where pos has the bit, else 0.
func (d *CUDA) ReLUBackwardBits(dst, grad Mat, pos Buffer[uint64]) {
	checkReLUBits("ReLUBackwardBits", "ReLUBackwardBits pos", dst, grad, pos)
	d.run2(kReLUBackwardBits, dst.rows, dst.cols, argMat(dst), argInt(dst.strid), argMat(grad), argInt(grad.strid), argBuf(pos),
		argInt(maskWords(dst.cols)), argInt(dst.rows), argInt(dst.cols))
}

// siteBits is counter.DropoutKey's second word for site.
func siteBits(site int) uint64 { return counter.StreamDropout<<32 | uint64(site) }

// Dropout applies spec's mask to src without recording it.
func (d *CUDA) Dropout(dst, src Mat, spec Dropout) {
	checkDropout("Dropout", dst, src, nil, &spec)
	d.run2(kDropout, dst.rows, dst.cols, argMat(dst), argInt(dst.strid), argMat(src), argInt(src.strid), argBuf(spec.Verts),
		spec.Seed, siteBits(spec.Site), uint64(spec.Step), dropThreshold(spec.P), argF32(dropScale(spec.P)[1]),
		argInt(spec.Col0), argInt(dst.rows), argInt(dst.cols))
}

// DropoutRecord applies spec's mask to src and records it in keep.
func (d *CUDA) DropoutRecord(dst, src Mat, keep Buffer[uint64], spec Dropout) {
	checkDropout("DropoutRecord", dst, src, &keep, &spec)
	d.dropoutRecord(dst, src, keep, &spec, false)
}

// ReLUDropoutRecord applies max(·, 0) and then spec's mask, recording it.
func (d *CUDA) ReLUDropoutRecord(dst, src Mat, keep Buffer[uint64], spec Dropout) {
	checkDropout("ReLUDropoutRecord", dst, src, &keep, &spec)
	d.dropoutRecord(dst, src, keep, &spec, true)
}

func (d *CUDA) dropoutRecord(dst, src Mat, keep Buffer[uint64], spec *Dropout, relu bool) {
	d.runWords(kDropoutRecord, dst.rows, dst.cols, argMat(dst), argInt(dst.strid), argMat(src), argInt(src.strid), argBuf(keep),
		argInt(maskWords(dst.cols)), argBuf(spec.Verts), spec.Seed, siteBits(spec.Site), uint64(spec.Step), dropThreshold(spec.P),
		argF32(dropScale(spec.P)[1]), argInt(spec.Col0), argBool(relu), argInt(dst.rows), argInt(dst.cols))
}

// ApplyMask applies a recorded mask.
func (d *CUDA) ApplyMask(dst, src Mat, keep Buffer[uint64], p float64) {
	checkApplyMask(dst, src, keep, p)
	d.run2(kApplyMask, dst.rows, dst.cols, argMat(dst), argInt(dst.strid), argMat(src), argInt(src.strid), argBuf(keep),
		argInt(maskWords(dst.cols)), argF32(dropScale(p)[1]), argInt(dst.rows), argInt(dst.cols))
}

// SumSquares sets ss[i] to the sum of squares of row i, left to right.
func (d *CUDA) SumSquares(ss Buffer[float32], z Mat) {
	z.check("SumSquares", "")
	checkLen("SumSquares ss", ss.Len(), z.rows)
	d.run1(kSumSquares, z.rows, argBuf(ss), argMat(z), argInt(z.strid), argInt(z.rows), argInt(z.cols))
}

// RMSNormApply finishes RMSNorm from the global sums of squares.
func (d *CUDA) RMSNormApply(dst, u Mat, rms Buffer[float32], z Mat, ss, scale Buffer[float32], norm RMSNorm, relu bool) {
	checkRMSNormApply(dst, u, rms, z, ss, scale, norm)
	if z.rows == 0 {
		return
	}
	// At least one column block, so that rms is written without columns.
	d.launch(kRMSNormApply, clampGrid(ceilDiv(z.cols, 32), 1024), clampGrid(ceilDiv(z.rows, 8), 65535), 32, 8,
		argMat(dst), argInt(dst.strid), argMat(u), argInt(u.strid), argBuf(rms), argMat(z), argInt(z.strid), argBuf(ss), argBuf(scale),
		argF64(float64(norm.N)), argF64(norm.Eps), argBool(relu), argInt(z.rows), argInt(z.cols))
}

// RMSNormBackwardLocal computes the scale gradient (rows in order, a
// thread per column) and the row dots (a thread per row).
func (d *CUDA) RMSNormBackwardLocal(gScale, dot Buffer[float32], da, u Mat, scale Buffer[float32]) {
	checkRMSNormBackwardLocal(gScale, dot, da, u, scale)
	d.run1(kRMSNormGScale, da.cols, argBuf(gScale), argMat(da), argInt(da.strid), argMat(u), argInt(u.strid), argInt(da.rows), argInt(da.cols))
	d.run1(kRMSNormDot, da.rows, argBuf(dot), argMat(da), argInt(da.strid), argMat(u), argInt(u.strid), argBuf(scale), argInt(da.rows), argInt(da.cols))
}

// RMSNormBackwardFinish computes dz.
func (d *CUDA) RMSNormBackwardFinish(dz, da, u Mat, scale, dot, rms Buffer[float32], norm RMSNorm) {
	checkRMSNormBackwardFinish(dz, da, u, scale, dot, rms, norm)
	d.run2(kRMSNormFinish, dz.rows, dz.cols, argMat(dz), argInt(dz.strid), argMat(da), argInt(da.strid), argMat(u), argInt(u.strid),
		argBuf(scale), argBuf(dot), argBuf(rms), argF32(1/float32(norm.N)), argInt(dz.rows), argInt(dz.cols))
}

// RowMax sets mx[i] to the maximum of training row i.
func (d *CUDA) RowMax(mx Buffer[float32], x Mat, train Buffer[uint8]) {
	checkRowMax(mx, x, train)
	d.run1(kRowMax, x.rows, argBuf(mx), argMat(x), argInt(x.strid), argBuf(train), argInt(x.rows), argInt(x.cols))
}

// SoftmaxSums computes the class-axis partials of the loss.
func (d *CUDA) SoftmaxSums(sums Buffer[float32], x Mat, mx Buffer[float32], labels Buffer[int32], train Buffer[uint8], c0 int) {
	checkSoftmaxSums(sums, x, mx, labels, train, c0)
	d.run1(kSoftmaxSums, x.rows, argBuf(sums), argMat(x), argInt(x.strid), argBuf(mx), argBuf(labels), argBuf(train),
		argInt(c0), argInt(x.rows), argInt(x.cols))
}

// SoftmaxGrad writes the unscaled gradient and returns the loss sum and
// count, summed on the GPU in a fixed order (k_sum2).
func (d *CUDA) SoftmaxGrad(dl, x Mat, mx, sums Buffer[float32], labels Buffer[int32], train Buffer[uint8], c0 int) (float64, float64) {
	checkSoftmaxGrad(dl, x, mx, sums, labels, train, c0)
	rows := x.rows
	d.run2(kSoftmaxGrad, rows, x.cols, argMat(dl), argInt(dl.strid), argMat(x), argInt(x.strid), argBuf(mx), argBuf(sums),
		argBuf(labels), argBuf(train), argInt(c0), argInt(rows), argInt(x.cols))
	if rows == 0 {
		return 0, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.terms.Len() < 2*rows {
		d.terms = Alloc[uint64](d, 2*rows)
	}
	d.run1(kLossTerms, rows, argBuf(d.terms), argBuf(mx), argBuf(sums), argBuf(train), argInt(rows))
	d.launch(kSum2, 1, 1, 256, 1, argBuf(d.small), argBuf(d.terms), argInt(rows))
	var out [2]uint64
	Download(d, out[:], d.small, 0)
	return math.Float64frombits(out[0]), math.Float64frombits(out[1])
}

// ArgMax sets the local first maximum of every row.
func (d *CUDA) ArgMax(best Buffer[float32], arg Buffer[int64], x Mat, c0 int) {
	checkArgMax(best, arg, x)
	d.run1(kArgMax, x.rows, argBuf(best), argBuf(arg), argMat(x), argInt(x.strid), argInt(c0), argInt(x.rows), argInt(x.cols))
}

// ArgMaxSettle drops local maxima that are not global ones.
func (d *CUDA) ArgMaxSettle(arg Buffer[int64], best, mx Buffer[float32]) {
	checkLen("ArgMaxSettle best", best.Len(), arg.Len())
	checkLen("ArgMaxSettle mx", mx.Len(), arg.Len())
	d.run1(kArgMaxSettle, arg.Len(), argBuf(arg), argBuf(best), argBuf(mx), argInt(arg.Len()))
}

// CountHits counts correct rows per mask with integer atomics.
func (d *CUDA) CountHits(arg Buffer[int64], labels Buffer[int32], masks [3]Buffer[uint8]) [6]int64 {
	n := arg.Len()
	checkLen("CountHits labels", labels.Len(), n)
	for k := range masks {
		checkLen("CountHits mask", masks[k].Len(), n)
	}
	var hits [6]int64
	if n == 0 {
		return hits
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.small.Slice(2, 8)
	if err := d.ctx.Memset(h.addr(0), 6*8); err != nil {
		d.fail("CountHits", err)
	}
	d.launch(kCountHits, clampGrid(ceilDiv(n, 256), 1024), 1, 256, 1, argBuf(h), argBuf(arg), argBuf(labels),
		argBuf(masks[0]), argBuf(masks[1]), argBuf(masks[2]), argInt(n))
	var out [6]uint64
	Download(d, out[:], h, 0)
	for k := range out {
		hits[k] = int64(out[k])
	}
	return hits
}

// OptimStep updates w, m and v in float64, as gcn's Optimizer does.
func (d *CUDA) OptimStep(w, g, m, v Buffer[float32], st OptimStep) {
	checkOptim(w, g, m, v, st)
	d.run1(kOptim, w.Len(), argBuf(w), argBuf(g), argBuf(m), argBuf(v), argInt(w.Len()), argInt(st.Kind), argF64(st.LR),
		argF64(st.WeightDecay), argF64(st.Beta1), argF64(st.Beta2), argF64(st.Epsilon), argF64(st.Corr1), argF64(st.Corr2))
}

// PackBF16 rounds src to bfloat16.
func (d *CUDA) PackBF16(dst Buffer[uint16], src Buffer[float32]) {
	checkLen("PackBF16 dst", dst.Len(), src.Len())
	d.run1(kPackBF16, src.Len(), argBuf(dst), argBuf(src), argInt(src.Len()))
}

// UnpackBF16 widens bfloat16 to float32.
func (d *CUDA) UnpackBF16(dst Buffer[float32], src Buffer[uint16]) {
	checkLen("UnpackBF16 dst", dst.Len(), src.Len())
	d.run1(kUnpackBF16, src.Len(), argBuf(dst), argBuf(src), argInt(src.Len()))
}

// checkIndices runs check on idx with its host elements: a Share's
// source when it has one (free), else a copy downloaded into reused
// scratch, since a kernel cannot panic and an index outside its matrix
// would read or write another buffer's memory.
func (d *CUDA) checkIndices(idx Buffer[int32], check func(Buffer[int32])) {
	if idx.blk != nil && idx.shadow == nil && idx.n > 0 {
		d.mu.Lock()
		defer d.mu.Unlock()
		if cap(d.idxHost) < idx.n {
			d.idxHost = make([]int32, idx.n)
		}
		idx.shadow = d.idxHost[:idx.n]
		Download(d, idx.shadow, idx, 0)
	}
	check(idx)
}

// GatherRows sets row i of dst to row idx[i] of src.
func (d *CUDA) GatherRows(dst, src Mat, idx Buffer[int32]) {
	d.checkIndices(idx, func(idx Buffer[int32]) { checkGather("GatherRows", dst, src, idx, false) })
	d.run2(kGatherRows, dst.rows, dst.cols, argMat(dst), argInt(dst.strid), argMat(src), argInt(src.strid), argBuf(idx),
		argInt(dst.rows), argInt(dst.cols))
}

// ScatterAddRows adds row i of src to row idx[i] of dst, rows in order.
func (d *CUDA) ScatterAddRows(dst, src Mat, idx Buffer[int32]) {
	d.checkIndices(idx, func(idx Buffer[int32]) { checkGather("ScatterAddRows", dst, src, idx, true) })
	if src.rows == 0 {
		return
	}
	d.run1(kScatterAddRows, dst.cols, argMat(dst), argInt(dst.strid), argMat(src), argInt(src.strid), argBuf(idx),
		argInt(src.rows), argInt(dst.cols))
}

// GatherI32 sets dst[i] = src[idx[i]].
func (d *CUDA) GatherI32(dst, src, idx Buffer[int32]) {
	d.checkIndices(idx, func(idx Buffer[int32]) { checkGather1("GatherI32", dst.Len(), src.Len(), idx) })
	d.run1(kGatherI32, dst.Len(), argBuf(dst), argBuf(src), argBuf(idx), argInt(dst.Len()))
}

// GatherU8 sets dst[i] = src[idx[i]].
func (d *CUDA) GatherU8(dst, src Buffer[uint8], idx Buffer[int32]) {
	d.checkIndices(idx, func(idx Buffer[int32]) { checkGather1("GatherU8", dst.Len(), src.Len(), idx) })
	d.run1(kGatherU8, dst.Len(), argBuf(dst), argBuf(src), argBuf(idx), argInt(dst.Len()))
}

// CopyBuffer copies src into dst (the same length) with the driver's
// device-to-device copy on dev: the reference for the GPU's bandwidth.
func CopyBuffer(dev Device, dst, src Buffer[float32]) {
	checkLen("CopyBuffer dst", dst.Len(), src.Len())
	d, ok := unwrapped(dev).(*CUDA)
	if !ok {
		shapePanic("CopyBuffer on %s: for the CUDA device", dev.Name())
	}
	if src.Len() == 0 {
		return
	}
	if err := d.ctx.D2D(dst.addr(0), src.addr(0), int64(src.Len())*4); err != nil {
		d.fail("cuMemcpyDtoD", err)
	}
}
