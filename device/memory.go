package device

import (
	"sync/atomic"
	"unsafe"

	"scalegnn/collectives"
	"scalegnn/grid"
)

// deviceMemory is what a device with memory of its own (the CUDA device)
// provides to the generic functions of this package (Alloc, Upload,
// Download, Share, the collectives, Redistribute), which cannot be
// methods because they are generic or take a communicator. The host
// devices have none (Device.memory returns nil): their buffers are Go
// slices, handed over as they are.
type deviceMemory interface {
	// alloc returns zeroed device memory, panicking with an
	// *OutOfMemoryError when the GPU has not enough.
	alloc(bytes int64) *gpuBlock
	// h2d copies host memory to the device; src may change once it
	// returns. d2h copies to the host after the queued work.
	h2d(dst uintptr, src unsafe.Pointer, bytes int64)
	d2h(dst unsafe.Pointer, src uintptr, bytes int64)

	allReduceF32(c collectives.Comm, buf Buffer[float32], op collectives.Op) error
	allReduceI64(c collectives.Comm, buf Buffer[int64], op collectives.Op) error
	allReduceBF16(c collectives.Comm, buf Buffer[float32], staging Buffer[uint16]) error
	iAllReduceF32(c collectives.Comm, buf Buffer[float32], op collectives.Op) (collectives.Request, error)
	iAllReduceBF16(c collectives.Comm, buf Buffer[float32], staging Buffer[uint16]) (collectives.Request, error)
	redistribute(g *grid.Grid, dst Buffer[float32], dstL grid.Layout, src Buffer[float32], srcL grid.Layout, rowMap []int32) error
}

// gpuBlock is one device allocation. Buffers point into it; it is freed
// when no Buffer refers to it any more (a cleanup registered by the
// device that made it), or at once by Free.
type gpuBlock struct {
	ptr   uintptr
	bytes int64
	mem   *gpuMemory // shared with the cleanup, which must not hold the block
}

// gpuMemory is the state of one allocation that its cleanup and Free
// share, so that it is freed once.
type gpuMemory struct {
	ptr   uintptr
	freed atomic.Bool
	free  func(uintptr)
}

func (m *gpuMemory) release() {
	if m != nil && m.freed.CompareAndSwap(false, true) {
		m.free(m.ptr)
	}
}

// Free releases the memory of b's allocation now on a device with memory
// of its own, rather than when the garbage collector finds it unreachable
// (it cannot see a GPU's memory filling up); on the host devices it does
// nothing. Every Buffer and Mat of that allocation, views included, must
// be dead: b must cover it from its start. The model's arenas free the
// buffers a pass outgrew before allocating larger ones.
func Free[T Elem](dev Device, b Buffer[T]) {
	if b.blk == nil || b.blk.mem == nil {
		return
	}
	if b.off != 0 {
		shapePanic("Free of a view at %d: free the buffer Alloc returned", b.off)
	}
	b.blk.mem.release()
}
