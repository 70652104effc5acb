package cpu

// #include "kernels.h"
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"scalegnn/spmm"
)

// Backend is the CPU spmm.Backend: a C SpMM kernel over goroutines and
// CBLAS GEMM. It holds no mutable state, so one value may serve several
// goroutines at once.
type Backend struct {
	threads int
}

var _ spmm.Backend = (*Backend)(nil)

// New returns a Backend that splits each product over up to threads
// goroutines; threads <= 0 means runtime.GOMAXPROCS(0) at call time.
func New(threads int) *Backend { return &Backend{threads: threads} }

// Name returns "cpu".
func (be *Backend) Name() string { return "cpu" }

func (be *Backend) workers() int {
	if be.threads <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return be.threads
}

// minParallelWork is the number of multiply-adds below which a product runs
// on the calling goroutine alone.
const minParallelWork = 1 << 17

// chunksPerWorker: SpMM cuts the rows into this many nonzero-balanced
// ranges per worker, handed out dynamically, so that a worker slowed by
// cache misses or by another rank on its core does not hold up the rest.
const chunksPerWorker = 4

// SpMM computes dst = a·b, overwriting dst. dst must not overlap b.
// Besides the shape checks every backend makes, it panics with a
// spmm.ShapeError if a's row pointers or column indices are out of range
// (the C kernel checks them, at a cost well below the product's).
func (be *Backend) SpMM(dst spmm.Dense, a *spmm.CSR, b spmm.Dense) {
	spmm.CheckSpMM(dst, a, b)
	if a.Rows == 0 || b.Cols == 0 {
		return
	}
	workers := be.workers()
	if float64(a.NNZ())*float64(b.Cols) < minParallelWork {
		workers = 1
	}
	chunks := workers
	if workers > 1 {
		chunks *= chunksPerWorker
	}
	bounds := spmm.PartitionRows(a, chunks)
	var next atomic.Int64
	var bad atomic.Int64
	bad.Store(-1)
	work := func() {
		for {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			if lo, hi := bounds[c], bounds[c+1]; lo < hi {
				if r := spmmRows(dst, a, b, lo, hi); r >= 0 {
					bad.CompareAndSwap(-1, r)
				}
			}
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	if r := bad.Load(); r >= 0 {
		panic(spmm.ShapeError(fmt.Sprintf("SpMM: CSR row %d has row pointers or column indices out of range", r)))
	}
}

// spmmRows runs the C kernel on rows [r0, r1) and returns the first
// malformed row, or -1. The caller guarantees a.Rows > 0 and b.Cols > 0,
// so dst.Data and a.RowPtr are non-empty; the other slices may be empty
// and are then passed as NULL, which the kernel never dereferences.
func spmmRows(dst spmm.Dense, a *spmm.CSR, b spmm.Dense, r0, r1 int) int64 {
	nnzcap := min(len(a.ColIdx), len(a.Val))
	var col *C.int32_t
	var val, bp *C.float
	if nnzcap > 0 {
		col = (*C.int32_t)(unsafe.Pointer(&a.ColIdx[0]))
		val = (*C.float)(unsafe.Pointer(&a.Val[0]))
	}
	if len(b.Data) > 0 {
		bp = (*C.float)(unsafe.Pointer(&b.Data[0]))
	}
	r := C.scalegnn_spmm_rows(
		(*C.float)(unsafe.Pointer(&dst.Data[0])), C.int64_t(dst.Stride),
		(*C.int64_t)(unsafe.Pointer(&a.RowPtr[0])), col, val,
		C.int64_t(nnzcap), C.int64_t(a.Cols),
		bp, C.int64_t(b.Stride), C.int64_t(b.Cols),
		C.int64_t(r0), C.int64_t(r1))
	return int64(r)
}

// Gemm computes dst = alpha·op(a)·op(b) + beta·dst with cblas_sgemm. As in
// BLAS, beta == 0 overwrites dst without reading it. Large products are cut
// into blocks of dst rows (or columns, when dst is short) that run as
// separate single-threaded sgemm calls on the backend's goroutines, so the
// backend uses the same cores for GEMM as for SpMM without BLAS threads.
func (be *Backend) Gemm(tA, tB spmm.Op, alpha float32, a, b spmm.Dense, beta float32, dst spmm.Dense) {
	m, n, k := spmm.CheckGemm(tA, tB, a, b, dst)
	if m == 0 || n == 0 {
		return
	}
	for _, v := range [...]int{m, n, k, a.Stride, b.Stride, dst.Stride} {
		if v > math.MaxInt32 {
			panic(spmm.ShapeError(fmt.Sprintf("Gemm: dimension or stride %d exceeds the 32-bit CBLAS interface", v)))
		}
	}
	if k == 0 || alpha == 0 {
		// BLAS would handle these too, but not all implementations accept
		// the zero leading dimensions an empty operand may have.
		scale(dst, beta)
		return
	}
	workers := be.workers()
	if float64(m)*float64(n)*float64(k) < minParallelWork {
		workers = 1
	}
	const minBlock = 32 // below this a block no longer fills BLAS's micro-kernel
	switch {
	case workers > 1 && m >= 2*minBlock:
		parts := min(workers, m/minBlock)
		parallel(parts, func(p int) {
			lo, hi := m*p/parts, m*(p+1)/parts
			var ap spmm.Dense // rows [lo, hi) of op(a)
			if tA == spmm.Trans {
				ap = spmm.Slice(a, 0, a.Rows, lo, hi)
			} else {
				ap = spmm.Slice(a, lo, hi, 0, a.Cols)
			}
			sgemm(tA, tB, alpha, ap, b, beta, spmm.Slice(dst, lo, hi, 0, n), hi-lo, n, k)
		})
	case workers > 1 && n >= 2*minBlock:
		parts := min(workers, n/minBlock)
		parallel(parts, func(p int) {
			lo, hi := n*p/parts, n*(p+1)/parts
			var bp spmm.Dense // columns [lo, hi) of op(b)
			if tB == spmm.Trans {
				bp = spmm.Slice(b, lo, hi, 0, b.Cols)
			} else {
				bp = spmm.Slice(b, 0, b.Rows, lo, hi)
			}
			sgemm(tA, tB, alpha, a, bp, beta, spmm.Slice(dst, 0, m, lo, hi), m, hi-lo, k)
		})
	default:
		sgemm(tA, tB, alpha, a, b, beta, dst, m, n, k)
	}
}

// sgemm calls cblas_sgemm on non-empty operands (m, n, k > 0). Leading
// dimensions are the strides, which CheckGemm has verified are at least
// the stored row lengths.
func sgemm(tA, tB spmm.Op, alpha float32, a, b spmm.Dense, beta float32, dst spmm.Dense, m, n, k int) {
	C.scalegnn_sgemm(cTrans(tA), cTrans(tB), C.int(m), C.int(n), C.int(k),
		C.float(alpha), (*C.float)(unsafe.Pointer(&a.Data[0])), C.int(max(a.Stride, 1)),
		(*C.float)(unsafe.Pointer(&b.Data[0])), C.int(max(b.Stride, 1)),
		C.float(beta), (*C.float)(unsafe.Pointer(&dst.Data[0])), C.int(max(dst.Stride, 1)))
}

func cTrans(t spmm.Op) C.int {
	if t == spmm.Trans {
		return 1
	}
	return 0
}

// scale computes dst = beta·dst, writing zeros without reading when beta is 0.
func scale(dst spmm.Dense, beta float32) {
	switch beta {
	case 1:
	case 0:
		spmm.Zero(dst)
	default:
		spmm.Scale(dst, beta, dst)
	}
}

// parallel runs fn(0..parts-1) concurrently, the last on the caller.
func parallel(parts int, fn func(p int)) {
	var wg sync.WaitGroup
	for p := range parts - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(p)
		}()
	}
	fn(parts - 1)
	wg.Wait()
}
