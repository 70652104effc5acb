package npy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
)

// Reader streams the elements of one .npy array, converting them to the
// element type the caller asks for.
type Reader struct {
	Header
	name string
	r    io.Reader
	t    dtype
	left int // elements not yet read
	buf  []byte
	pos  int // elements already read, for error messages
}

// NewReader reads the header from r. name labels error messages (the
// file's path).
func NewReader(r io.Reader, name string) (*Reader, error) {
	h, err := ReadHeader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t, _ := parseDescr(h.Descr) // checked by ReadHeader
	return &Reader{Header: *h, name: name, r: r, t: t, left: h.Len()}, nil
}

// File is a Reader over an open file; Close closes it.
type File struct {
	*Reader
	f *os.File
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Open opens a .npy file and checks that its size is exactly the header
// plus the elements the shape calls for (a truncated or padded file is an
// error).
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(bufio.NewReaderSize(f, 1<<20), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	want := r.DataOffset + int64(r.Len())*int64(r.t.size)
	if st.Size() != want {
		f.Close()
		return nil, fmt.Errorf("%s: %d bytes, but its header (dtype %s, shape %v) needs %d: truncated or corrupt file",
			path, st.Size(), r.Descr, r.Shape, want)
	}
	return &File{Reader: r, f: f}, nil
}

// Name is the name given to NewReader or Open.
func (r *Reader) Name() string { return r.name }

// Remaining is the number of elements not read yet.
func (r *Reader) Remaining() int { return r.left }

// chunk reads the raw bytes of up to n elements.
func (r *Reader) chunk(n int) ([]byte, error) {
	n = min(n, r.left)
	b := n * r.t.size
	if cap(r.buf) < b {
		r.buf = make([]byte, b)
	}
	r.buf = r.buf[:b]
	if _, err := io.ReadFull(r.r, r.buf); err != nil {
		return nil, fmt.Errorf("%s: reading elements %d to %d: %w (truncated file?)", r.name, r.pos, r.pos+n, noEOF(err))
	}
	return r.buf, nil
}

func (r *Reader) order() binary.ByteOrder {
	if r.t.big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// rawInt returns element i of b as an integer, or ok false for floats.
func (r *Reader) rawInt(b []byte, i int) (v int64, u uint64, unsigned bool) {
	o, s := r.order(), r.t.size
	p := b[i*s : (i+1)*s]
	switch r.t.kind {
	case 'b':
		return int64(p[0]), 0, false
	case 'u':
		switch s {
		case 1:
			return 0, uint64(p[0]), true
		case 2:
			return 0, uint64(o.Uint16(p)), true
		case 4:
			return 0, uint64(o.Uint32(p)), true
		}
		return 0, o.Uint64(p), true
	}
	switch s {
	case 1:
		return int64(int8(p[0])), 0, false
	case 2:
		return int64(int16(o.Uint16(p))), 0, false
	case 4:
		return int64(int32(o.Uint32(p))), 0, false
	}
	return int64(o.Uint64(p)), 0, false
}

func (r *Reader) rawFloat(b []byte, i int) float64 {
	o, s := r.order(), r.t.size
	p := b[i*s : (i+1)*s]
	if s == 4 {
		return float64(math.Float32frombits(o.Uint32(p)))
	}
	return math.Float64frombits(o.Uint64(p))
}

// ReadInt64 reads the next min(len(dst), Remaining()) elements of an
// integer or boolean array into dst. A float array, or an unsigned value
// beyond int64, is an error.
func (r *Reader) ReadInt64(dst []int64) (int, error) {
	if r.t.kind == 'f' {
		return 0, fmt.Errorf("%s: dtype %s: expected an integer array", r.name, r.Descr)
	}
	if r.bulk('i', 8) {
		n := min(len(dst), r.left)
		return n, r.readRaw(asBytes(dst[:n]), n)
	}
	b, err := r.chunk(len(dst))
	if err != nil {
		return 0, err
	}
	n := len(b) / r.t.size
	if r.t.kind == 'i' && r.t.size == 8 && !r.t.big {
		for i := range n {
			dst[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
		r.pos += n
		r.left -= n
		return n, nil
	}
	for i := range n {
		v, u, uns := r.rawInt(b, i)
		if uns {
			if u > math.MaxInt64 {
				return 0, fmt.Errorf("%s: element %d is %d, beyond int64", r.name, r.pos+i, u)
			}
			v = int64(u)
		}
		dst[i] = v
	}
	r.pos += n
	r.left -= n
	return n, nil
}

// ReadInt32 is ReadInt64 with values that must fit an int32.
func (r *Reader) ReadInt32(dst []int32) (int, error) {
	if r.bulk('i', 4) {
		n := min(len(dst), r.left)
		return n, r.readRaw(asBytes(dst[:n]), n)
	}
	if r.t.kind == 'i' && r.t.size == 4 && !r.t.big {
		b, err := r.chunk(len(dst))
		if err != nil {
			return 0, err
		}
		n := len(b) / 4
		for i := range n {
			dst[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		}
		r.pos += n
		r.left -= n
		return n, nil
	}
	tmp := make([]int64, min(len(dst), r.left))
	n, err := r.ReadInt64(tmp)
	if err != nil {
		return 0, err
	}
	for i, v := range tmp[:n] {
		if v < math.MinInt32 || v > math.MaxInt32 {
			return 0, fmt.Errorf("%s: element %d is %d, beyond int32", r.name, r.pos-n+i, v)
		}
		dst[i] = int32(v)
	}
	return n, nil
}

// ReadFloat32 reads the next elements of a float, integer or boolean array
// as float32. A float64 value beyond the float32 range is an error;
// others are rounded to nearest.
func (r *Reader) ReadFloat32(dst []float32) (int, error) {
	if r.bulk('f', 4) {
		n := min(len(dst), r.left)
		return n, r.readRaw(asBytes(dst[:n]), n)
	}
	b, err := r.chunk(len(dst))
	if err != nil {
		return 0, err
	}
	n := len(b) / r.t.size
	if r.t.kind == 'f' && r.t.size == 4 && !r.t.big {
		for i := range n {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	} else {
		for i := range n {
			var v float64
			if r.t.kind == 'f' {
				v = r.rawFloat(b, i)
			} else {
				iv, u, uns := r.rawInt(b, i)
				v = float64(iv)
				if uns {
					v = float64(u)
				}
			}
			if math.Abs(v) > math.MaxFloat32 && !math.IsInf(v, 0) {
				return 0, fmt.Errorf("%s: element %d is %g, beyond float32", r.name, r.pos+i, v)
			}
			dst[i] = float32(v)
		}
	}
	r.pos += n
	r.left -= n
	return n, nil
}

// ReadBool reads the next elements of a boolean array, or of an integer
// array of zeros and ones.
func (r *Reader) ReadBool(dst []bool) (int, error) {
	if r.t.kind == 'f' {
		return 0, fmt.Errorf("%s: dtype %s: expected a boolean (or 0/1 integer) array", r.name, r.Descr)
	}
	if r.t.kind == 'b' {
		return r.readBoolBulk(dst)
	}
	b, err := r.chunk(len(dst))
	if err != nil {
		return 0, err
	}
	n := len(b) / r.t.size
	for i := range n {
		v, u, uns := r.rawInt(b, i)
		if uns {
			v = int64(min(u, 2))
		}
		if v != 0 && v != 1 {
			return 0, fmt.Errorf("%s: element %d is %d: expected 0 or 1 (a boolean mask)", r.name, r.pos+i, v)
		}
		dst[i] = v == 1
	}
	r.pos += n
	r.left -= n
	return n, nil
}

// readAll reads every remaining element with read.
func readAll[T any](r *Reader, read func([]T) (int, error)) ([]T, error) {
	out := make([]T, r.left)
	if err := fill(r, out, read); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadAllInt32 reads every remaining element as int32.
func (r *Reader) ReadAllInt32() ([]int32, error) { return readAll(r, r.ReadInt32) }

// ReadAllInt64 reads every remaining element as int64.
func (r *Reader) ReadAllInt64() ([]int64, error) { return readAll(r, r.ReadInt64) }

// ReadAllFloat32 reads every remaining element as float32.
func (r *Reader) ReadAllFloat32() ([]float32, error) { return readAll(r, r.ReadFloat32) }

// ReadAllBool reads every remaining element as bool.
func (r *Reader) ReadAllBool() ([]bool, error) { return readAll(r, r.ReadBool) }

// Parse reads a whole .npy file held in memory and checks that data holds
// exactly the elements its header calls for. It returns a Reader over the
// elements.
func Parse(data []byte, name string) (*Reader, error) {
	r, err := NewReader(bytes.NewReader(data), name)
	if err != nil {
		return nil, err
	}
	want := r.DataOffset + int64(r.Len())*int64(r.t.size)
	if int64(len(data)) != want {
		return nil, fmt.Errorf("%s: %d bytes, but its header (dtype %s, shape %v) needs %d: truncated or corrupt file",
			name, len(data), r.Descr, r.Shape, want)
	}
	return r, nil
}
