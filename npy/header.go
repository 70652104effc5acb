package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// magic starts every .npy file.
const magic = "\x93NUMPY"

// maxHeaderLen bounds the header dictionary; numpy's own limit is 10 KiB for
// version 1.0 and unbounded later, but a shape of a few integers never needs
// more.
const maxHeaderLen = 1 << 16

// Header is the parsed header of a .npy file.
type Header struct {
	// Descr is the dtype, e.g. "<f4", "<i8", "|b1".
	Descr string
	// Shape is the array's shape; a scalar has an empty shape.
	Shape []int
	// DataOffset is the byte offset of the first element.
	DataOffset int64
}

// Len is the number of elements, the product of the shape.
func (h *Header) Len() int {
	n := 1
	for _, d := range h.Shape {
		n *= d
	}
	return n
}

// dtype is an element type of the files this package reads.
type dtype struct {
	kind byte // 'i' signed, 'u' unsigned, 'f' float, 'b' bool
	size int
	big  bool // big-endian
}

func parseDescr(d string) (dtype, error) {
	if len(d) < 3 {
		return dtype{}, fmt.Errorf("unsupported dtype %q", d)
	}
	var t dtype
	switch d[0] {
	case '<', '|', '=':
	case '>':
		t.big = true
	default:
		return dtype{}, fmt.Errorf("unsupported dtype %q", d)
	}
	t.kind = d[1]
	size, err := strconv.Atoi(d[2:])
	if err != nil {
		return dtype{}, fmt.Errorf("unsupported dtype %q", d)
	}
	t.size = size
	ok := false
	switch t.kind {
	case 'i', 'u':
		ok = size == 1 || size == 2 || size == 4 || size == 8
	case 'f':
		ok = size == 4 || size == 8
	case 'b':
		ok = size == 1
	}
	if !ok {
		return dtype{}, fmt.Errorf("unsupported dtype %q (want bool, int8..int64, uint8..uint64, float32 or float64)", d)
	}
	if t.size == 1 {
		t.big = false
	}
	return t, nil
}

// ReadHeader reads and checks the magic, version and header dictionary
// from r, leaving r at the first element.
func ReadHeader(r io.Reader) (*Header, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("not a .npy file: %w", noEOF(err))
	}
	if string(pre[:6]) != magic {
		return nil, errors.New(`not a .npy file: missing the "\x93NUMPY" magic`)
	}
	major := pre[6]
	var hlen int
	off := int64(8)
	switch major {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("truncated .npy header: %w", noEOF(err))
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
		off += 2
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("truncated .npy header: %w", noEOF(err))
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
		off += 4
	default:
		return nil, fmt.Errorf(".npy format version %d.%d not supported (want 1.0, 2.0 or 3.0)", pre[6], pre[7])
	}
	if hlen > maxHeaderLen {
		return nil, fmt.Errorf(".npy header of %d bytes (at most %d supported)", hlen, maxHeaderLen)
	}
	buf := make([]byte, hlen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("truncated .npy header: %w", noEOF(err))
	}
	h, err := parseDict(string(buf))
	if err != nil {
		return nil, err
	}
	h.DataOffset = off + int64(hlen)
	return h, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseDict parses the Python dict literal of a header, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
func parseDict(s string) (*Header, error) {
	bad := func(why string) error { return fmt.Errorf("malformed .npy header %q: %s", strings.TrimSpace(s), why) }
	s = strings.TrimRight(s, " \n\x00")
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return nil, bad("expected a {...} dictionary")
	}
	body := s[1 : len(s)-1]
	h := &Header{}
	var haveDescr, haveShape, haveOrder bool
	for {
		body = strings.TrimLeft(body, " ,")
		if body == "" {
			break
		}
		key, rest, ok := pyString(body)
		if !ok {
			return nil, bad("expected a quoted key")
		}
		rest = strings.TrimLeft(rest, " ")
		if !strings.HasPrefix(rest, ":") {
			return nil, bad("expected ':' after key " + key)
		}
		rest = strings.TrimLeft(rest[1:], " ")
		switch key {
		case "descr":
			v, r, ok := pyString(rest)
			if !ok {
				return nil, bad("descr must be a string (structured dtypes are not supported)")
			}
			h.Descr, rest, haveDescr = v, r, true
		case "fortran_order":
			switch {
			case strings.HasPrefix(rest, "False"):
				rest = rest[5:]
			case strings.HasPrefix(rest, "True"):
				return nil, bad("Fortran-order arrays are not supported; save with numpy.ascontiguousarray")
			default:
				return nil, bad("fortran_order must be True or False")
			}
			haveOrder = true
		case "shape":
			if !strings.HasPrefix(rest, "(") {
				return nil, bad("shape must be a tuple")
			}
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				return nil, bad("unterminated shape tuple")
			}
			for _, f := range strings.Split(rest[1:end], ",") {
				f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "L"))
				if f == "" {
					continue
				}
				d, err := shapeEntry(f)
				if err != nil {
					return nil, bad(err.Error())
				}
				h.Shape = append(h.Shape, d)
			}
			rest, haveShape = rest[end+1:], true
		default:
			return nil, bad("unknown key " + key)
		}
		body = rest
	}
	if !haveDescr || !haveShape || !haveOrder {
		return nil, bad("need descr, fortran_order and shape")
	}
	if len(h.Shape) > 8 {
		return nil, bad("more than 8 dimensions")
	}
	// The product is checked before each multiplication: two entries of
	// 2^40 would overflow int64 and could wrap to a small count.
	n := int64(1)
	for _, d := range h.Shape {
		if d != 0 && n > maxElements/int64(d) {
			return nil, bad("more than 2^40 elements")
		}
		n *= int64(d)
	}
	if _, err := parseDescr(h.Descr); err != nil {
		return nil, err
	}
	return h, nil
}

// maxElements bounds a dimension and an array's element count: 2^40
// elements (4 TiB of float32) is beyond any array scalegnn reads, and the
// bound keeps sizes in bytes far from int64 overflow.
const maxElements = 1 << 40

// shapeEntry parses one entry of a shape tuple, telling a number too large
// apart from one that is negative or not a number.
func shapeEntry(f string) (int, error) {
	digits := strings.TrimPrefix(f, "+")
	if digits != "" && strings.Trim(digits, "0123456789") == "" {
		d, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || d > maxElements {
			return 0, fmt.Errorf("shape entry %s is too large (at most 2^40)", f)
		}
		return int(d), nil
	}
	return 0, fmt.Errorf("shape entry %q is not a non-negative integer", f)
}

// pyString reads a single- or double-quoted Python string literal (without
// escapes) at the start of s.
func pyString(s string) (v, rest string, ok bool) {
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return "", s, false
	}
	end := strings.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", s, false
	}
	return s[1 : 1+end], s[2+end:], true
}

// formatHeader returns the complete header (magic to padding) for an array
// of dtype descr and the given shape, padded to a multiple of 64 bytes so
// that the data is aligned.
func formatHeader(descr string, shape []int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr)
	for i, d := range shape {
		b.WriteString(strconv.Itoa(d))
		if len(shape) == 1 || i < len(shape)-1 {
			b.WriteString(",")
			if i < len(shape)-1 {
				b.WriteString(" ")
			}
		}
	}
	b.WriteString("), }")
	dict := b.String()
	var out bytes.Buffer
	pre := 10
	version := byte(1)
	if len(dict)+pre+1 > 65535 {
		pre, version = 12, 2
	}
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	pad := total - pre - len(dict) - 1
	out.WriteString(magic)
	out.WriteByte(version)
	out.WriteByte(0)
	hl := total - pre
	if version == 1 {
		binary.Write(&out, binary.LittleEndian, uint16(hl))
	} else {
		binary.Write(&out, binary.LittleEndian, uint32(hl))
	}
	out.WriteString(dict)
	out.WriteString(strings.Repeat(" ", pad))
	out.WriteByte('\n')
	return out.Bytes()
}
