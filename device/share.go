package device

import (
	"scalegnn/grid"
)

// Share returns a buffer holding src for reading by dev's operations. Host
// devices adopt src itself, without a copy, so a model's inputs (features,
// vertex ids, labels) live once in memory; src must then stay unchanged
// while the buffer is in use. A device with memory of its own copies src
// into a new buffer; use ShareInto where the same input is shared again
// and again (a mini-batch's), to reuse the buffer.
func Share[T Elem](dev Device, src []T) Buffer[T] {
	var b Buffer[T]
	ShareInto(dev, &b, src)
	return b
}

// ShareInto makes *dst hold src as Share does, reusing *dst's device
// memory when it is large enough (a zero Buffer has none).
func ShareInto[T Elem](dev Device, dst *Buffer[T], src []T) {
	g := dev.memory()
	if g == nil {
		*dst = Buffer[T]{host: src[:len(src):len(src)]}
		return
	}
	need := int64(len(src)) * elemSize[T]()
	if dst.blk == nil || dst.off != 0 || dst.blk.bytes < need {
		*dst = Buffer[T]{blk: g.alloc(need)}
	}
	dst.n, dst.shadow = len(src), src[:len(src):len(src)]
	Upload(dev, *dst, 0, src)
}

// Redistribute moves a distributed matrix between layouts, as
// grid.Grid.Redistribute does, with src and dst in device memory (the
// residual connection: a layer's input in its output layout). Host devices
// hand their memory to the grid as it is; a GPU device stages through
// host memory.
func Redistribute(dev Device, g *grid.Grid, dst Buffer[float32], dstL grid.Layout, src Buffer[float32], srcL grid.Layout, rowMap []int32) error {
	if m := dev.memory(); m != nil {
		return m.redistribute(g, dst, dstL, src, srcL, rowMap)
	}
	return g.Redistribute(dst.host, dstL, src.host, srcL, rowMap)
}
