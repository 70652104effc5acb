package npy

import (
	"encoding/binary"
	"fmt"
	"io"
	"unsafe"
)

// nativeLittle is true on little-endian hosts (amd64, arm64), where an
// array stored as '<i4', '<i8' or '<f4' has exactly the bytes of the Go
// slice it decodes into.
var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// bulk reports whether elements of r can be read straight into the memory
// of a slice of Go elements of kind and size: same type, host byte order.
func (r *Reader) bulk(kind byte, size int) bool {
	return r.t.kind == kind && r.t.size == size && (r.t.size == 1 || r.t.big != nativeLittle)
}

// readRaw reads n elements' raw bytes straight into p (n·size bytes), with
// no intermediate buffer: the whole cost of a bulk read is the copy from
// the kernel (and whatever the underlying reader does with the bytes, such
// as hashing them).
func (r *Reader) readRaw(p []byte, n int) error {
	if _, err := io.ReadFull(r.r, p); err != nil {
		return fmt.Errorf("%s: reading elements %d to %d: %w (truncated file?)", r.name, r.pos, r.pos+n, noEOF(err))
	}
	r.pos += n
	r.left -= n
	return nil
}

// asBytes is the memory of s as bytes.
func asBytes[T int32 | int64 | float32 | bool | uint16](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// fill reads exactly len(dst) elements with read, or fails. Reads go in
// pieces of 1M elements so that a converting read's buffer stays small.
func fill[T any](r *Reader, dst []T, read func([]T) (int, error)) error {
	if len(dst) > r.left {
		return fmt.Errorf("%s: %d elements wanted, %d left (dtype %s, shape %v)", r.name, len(dst), r.left, r.Descr, r.Shape)
	}
	for done := 0; done < len(dst); {
		n, err := read(dst[done:min(len(dst), done+1<<20)])
		if err != nil {
			return err
		}
		done += n
	}
	return nil
}

// FillInt32 reads exactly len(dst) elements into dst (as ReadInt32). For
// a little-endian int32 array on a little-endian host the bytes go
// straight from the file into dst: no conversion, no buffer.
func (r *Reader) FillInt32(dst []int32) error { return fill(r, dst, r.ReadInt32) }

// FillInt64 reads exactly len(dst) elements into dst (as ReadInt64), in
// bulk for int64 arrays in host byte order.
func (r *Reader) FillInt64(dst []int64) error { return fill(r, dst, r.ReadInt64) }

// FillFloat32 reads exactly len(dst) elements into dst (as ReadFloat32),
// in bulk for float32 arrays in host byte order.
func (r *Reader) FillFloat32(dst []float32) error { return fill(r, dst, r.ReadFloat32) }

// FillUint16 reads exactly len(dst) elements of a '<u2' (or '>u2') array
// into dst: in bulk, straight from the file, in host byte order. Any other
// dtype is an error: 16-bit words (bfloat16 features) are never converted
// from other integers.
func (r *Reader) FillUint16(dst []uint16) error {
	if r.t.kind != 'u' || r.t.size != 2 {
		return fmt.Errorf("%s: dtype %s: expected a uint16 array", r.name, r.Descr)
	}
	return fill(r, dst, func(p []uint16) (int, error) {
		n := min(len(p), r.left)
		if err := r.readRaw(asBytes(p[:n]), n); err != nil {
			return 0, err
		}
		if r.t.big == nativeLittle {
			for i, v := range p[:n] {
				p[i] = v>>8 | v<<8
			}
		}
		return n, nil
	})
}

// FillBool reads exactly len(dst) elements into dst (as ReadBool), in bulk
// for bool arrays (each byte is checked to be 0 or 1).
func (r *Reader) FillBool(dst []bool) error { return fill(r, dst, r.ReadBool) }

// readBoolBulk reads a '|b1' array straight into dst's bytes and then
// checks them: a byte other than 0 or 1 is an error, and dst is cleared
// so that it never holds an invalid bool.
func (r *Reader) readBoolBulk(dst []bool) (int, error) {
	n := min(len(dst), r.left)
	p := asBytes(dst[:n])
	pos := r.pos
	if err := r.readRaw(p, n); err != nil {
		return 0, err
	}
	for i, b := range p {
		if b > 1 {
			clear(p)
			return 0, fmt.Errorf("%s: element %d is %d: expected 0 or 1 (a boolean mask)", r.name, pos+i, b)
		}
	}
	return n, nil
}

// Skip reads past the next n elements without decoding them (through the
// underlying reader, so that a reader that hashes what passes sees them).
func (r *Reader) Skip(n int) error {
	if n > r.left {
		return fmt.Errorf("%s: skipping %d elements, %d left", r.name, n, r.left)
	}
	if _, err := io.CopyN(io.Discard, r.r, int64(n)*int64(r.t.size)); err != nil {
		return fmt.Errorf("%s: skipping elements %d to %d: %w (truncated file?)", r.name, r.pos, r.pos+n, noEOF(err))
	}
	r.pos += n
	r.left -= n
	return nil
}
