package collectives

import (
	"fmt"
	"unsafe"
)

// Words views h as float32 words, two halfwords to a word as they lie in
// memory, so that the float32 collectives move bfloat16 values as they
// are, without a copy: every implementation moves a word's bits
// unchanged, so the receiver reads the same halfwords. h must have an
// even length and start on a 4-byte boundary (an even index of a slice
// the allocator made); anything else panics.
func Words(h []uint16) []float32 {
	if len(h) == 0 {
		return nil
	}
	if len(h)%2 != 0 || uintptr(unsafe.Pointer(&h[0]))%4 != 0 {
		panic(fmt.Sprintf("collectives: Words of %d halfwords at %p: want an even length on a 4-byte boundary", len(h), &h[0]))
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&h[0])), len(h)/2)
}
