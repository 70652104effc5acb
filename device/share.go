package device

import (
	"scalegnn/grid"
)

// Share returns a buffer holding src for reading by dev's operations. Host
// devices adopt src itself, without a copy, so a model's inputs (features,
// vertex ids, labels) live once in memory; src must then stay unchanged
// while the buffer is in use. A device with memory of its own will copy
// src into a buffer it reuses.
func Share[T Elem](dev Device, src []T) Buffer[T] {
	dev.hostMemory()
	return Buffer[T]{host: src[:len(src):len(src)]}
}

// Redistribute moves a distributed matrix between layouts, as
// grid.Grid.Redistribute does, with src and dst in device memory (the
// residual connection: a layer's input in its output layout). Host devices
// hand their memory to the grid as it is.
func Redistribute(dev Device, g *grid.Grid, dst Buffer[float32], dstL grid.Layout, src Buffer[float32], srcL grid.Layout, rowMap []int32) error {
	dev.hostMemory()
	return g.Redistribute(dst.host, dstL, src.host, srcL, rowMap)
}
