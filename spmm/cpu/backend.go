package cpu

// #include "kernels.h"
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"scalegnn/internal/par"
	"scalegnn/spmm"
)

// Backend is the CPU spmm.Backend: a C SpMM kernel over goroutines and
// CBLAS GEMM (gonum's under -tags noblas). It holds no mutable state, so one value may serve several
// goroutines at once.
type Backend struct {
	threads int
	// isa picks the kernel's instruction set (a SCALEGNN_ISA_* value); 0,
	// as New leaves it, means the widest the CPU supports. Tests set it to
	// run every compiled variant.
	isa isa
}

// isa is an instruction set the SpMM kernel is compiled for
// (SCALEGNN_ISA_* in kernels.h).
type isa int

const (
	isaAuto   isa = 0
	isaBase   isa = C.SCALEGNN_ISA_BASE
	isaAVX2   isa = C.SCALEGNN_ISA_AVX2
	isaAVX512 isa = C.SCALEGNN_ISA_AVX512
)

// supportedISAs returns the kernel variants this CPU can run.
func supportedISAs() []isa {
	bits := isa(C.scalegnn_spmm_isas())
	var out []isa
	for _, x := range []isa{isaBase, isaAVX2, isaAVX512} {
		if bits&x != 0 {
			out = append(out, x)
		}
	}
	return out
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
	be.spmmRanges(a, b.Cols, func(lo, hi int) int64 { return spmmRows(be.isa, dst, a, b, lo, hi) })
}

// spmmRanges runs rows(lo, hi), which returns the first malformed row or
// -1, over nonzero-balanced ranges of a's rows on the backend's
// goroutines, and panics with a spmm.ShapeError if a range found a
// malformed row. width is the product's width (the columns of b).
func (be *Backend) spmmRanges(a *spmm.CSR, width int, rows func(lo, hi int) int64) {
	if a.Rows == 0 || width == 0 {
		return
	}
	workers := be.workers()
	if float64(a.NNZ())*float64(width) < minParallelWork {
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
				if r := rows(lo, hi); r >= 0 {
					bad.CompareAndSwap(-1, r)
				}
			}
		}
	}
	par.Do(workers, func(int) { work() })
	if r := bad.Load(); r >= 0 {
		badRow(r)
	}
}

// badRow panics with the spmm.ShapeError of a malformed CSR row.
func badRow(r int64) {
	panic(spmm.ShapeError(fmt.Sprintf("SpMM: CSR row %d has row pointers or column indices out of range", r)))
}

// spmmRows runs the C kernel on rows [r0, r1) and returns the first
// malformed row, or -1. The caller guarantees a.Rows > 0 and b.Cols > 0,
// so dst.Data and a.RowPtr are non-empty; the other slices may be empty
// and are then passed as NULL, which the kernel never dereferences.
func spmmRows(x isa, dst spmm.Dense, a *spmm.CSR, b spmm.Dense, r0, r1 int) int64 {
	col, val, nnzcap := csrArgs(a)
	var bp *C.float
	if len(b.Data) > 0 {
		bp = (*C.float)(unsafe.Pointer(&b.Data[0]))
	}
	r := C.scalegnn_spmm_rows(C.int(x),
		(*C.float)(unsafe.Pointer(&dst.Data[0])), C.int64_t(dst.Stride),
		(*C.int64_t)(unsafe.Pointer(&a.RowPtr[0])), col, val,
		nnzcap, C.int64_t(a.Cols),
		bp, C.int64_t(b.Stride), C.int64_t(b.Cols),
		C.int64_t(r0), C.int64_t(r1))
	return int64(r)
}

// csrArgs returns a's column indices and values as C pointers (NULL when
// there are none) and how many entries both slices hold.
func csrArgs(a *spmm.CSR) (col *C.int32_t, val *C.float, nnzcap C.int64_t) {
	n := min(len(a.ColIdx), len(a.Val))
	if n > 0 {
		col = (*C.int32_t)(unsafe.Pointer(&a.ColIdx[0]))
		val = (*C.float)(unsafe.Pointer(&a.Val[0]))
	}
	return col, val, C.int64_t(n)
}

// parallel runs fn(0..parts-1) concurrently, the last on the caller; a
// panic in any part is raised on the caller (package par).
func parallel(parts int, fn func(p int)) { par.Do(parts, fn) }
