package npy

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Dtypes this package writes.
const (
	Int32   = "<i4"
	Int64   = "<i8"
	Float32 = "<f4"
	Bool    = "|b1"
	// Uint16 holds raw 16-bit words: scalegnn's prepared datasets store
	// bfloat16 features as uint16 (NumPy has no bfloat16 dtype of its own).
	Uint16 = "<u2"
)

// Writer writes one .npy array of a fixed dtype and shape.
type Writer struct {
	w     io.Writer
	descr string
	left  int
	buf   []byte
}

// NewWriter writes the header of an array of dtype descr (Int32, Int64,
// Float32, Bool or Uint16) and the given shape to w. The element writes must then
// supply exactly the product of the shape elements, of the dtype's type.
// An unknown dtype or a negative dimension is a programmer error and
// panics.
func NewWriter(w io.Writer, descr string, shape ...int) (*Writer, error) {
	switch descr {
	case Int32, Int64, Float32, Bool, Uint16:
	default:
		panic(fmt.Sprintf("npy: NewWriter: dtype %q, want Int32, Int64, Float32, Bool or Uint16", descr))
	}
	n := 1
	for _, d := range shape {
		if d < 0 {
			panic(fmt.Sprintf("npy: NewWriter: negative dimension in shape %v", shape))
		}
		n *= d
	}
	if _, err := w.Write(formatHeader(descr, shape)); err != nil {
		return nil, err
	}
	return &Writer{w: w, descr: descr, left: n}, nil
}

func (w *Writer) take(n int, descr string) {
	if descr != w.descr {
		panic(fmt.Sprintf("npy: writing %s elements to a %s array", descr, w.descr))
	}
	if n > w.left {
		panic(fmt.Sprintf("npy: writing %d elements with %d left of the shape", n, w.left))
	}
	w.left -= n
}

func (w *Writer) flush() error {
	_, err := w.w.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// WriteInt32 appends elements to an Int32 array.
func (w *Writer) WriteInt32(x []int32) error {
	w.take(len(x), Int32)
	for len(x) > 0 {
		k := min(len(x), 1<<16)
		for _, v := range x[:k] {
			w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(v))
		}
		if err := w.flush(); err != nil {
			return err
		}
		x = x[k:]
	}
	return nil
}

// WriteInt64 appends elements to an Int64 array.
func (w *Writer) WriteInt64(x []int64) error {
	w.take(len(x), Int64)
	for len(x) > 0 {
		k := min(len(x), 1<<16)
		for _, v := range x[:k] {
			w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(v))
		}
		if err := w.flush(); err != nil {
			return err
		}
		x = x[k:]
	}
	return nil
}

// WriteFloat32 appends elements to a Float32 array.
func (w *Writer) WriteFloat32(x []float32) error {
	w.take(len(x), Float32)
	for len(x) > 0 {
		k := min(len(x), 1<<16)
		for _, v := range x[:k] {
			w.buf = binary.LittleEndian.AppendUint32(w.buf, math.Float32bits(v))
		}
		if err := w.flush(); err != nil {
			return err
		}
		x = x[k:]
	}
	return nil
}

// WriteUint16 appends elements to a Uint16 array.
func (w *Writer) WriteUint16(x []uint16) error {
	w.take(len(x), Uint16)
	for len(x) > 0 {
		k := min(len(x), 1<<16)
		for _, v := range x[:k] {
			w.buf = binary.LittleEndian.AppendUint16(w.buf, v)
		}
		if err := w.flush(); err != nil {
			return err
		}
		x = x[k:]
	}
	return nil
}

// WriteBool appends elements to a Bool array.
func (w *Writer) WriteBool(x []bool) error {
	w.take(len(x), Bool)
	for len(x) > 0 {
		k := min(len(x), 1<<16)
		for _, v := range x[:k] {
			b := byte(0)
			if v {
				b = 1
			}
			w.buf = append(w.buf, b)
		}
		if err := w.flush(); err != nil {
			return err
		}
		x = x[k:]
	}
	return nil
}

// Close reports an error if fewer elements were written than the shape
// holds. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.left != 0 {
		return fmt.Errorf("npy: %d elements of the shape were not written", w.left)
	}
	return nil
}
