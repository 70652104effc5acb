package checkpoint

import "unsafe"

// f32Bytes views float32s as their little-endian bytes (every platform Go
// runs scalegnn on is little-endian, as the .npy dtype "<f4" says).
func f32Bytes(x []float32) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x))
}
