package npy

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// TestUint16: a Uint16 array written by WriteUint16 reads back by
// FillUint16 bit for bit, in pieces; a big-endian '>u2' array is swapped;
// other dtypes are refused rather than converted.
func TestUint16(t *testing.T) {
	x := make([]uint16, 70000) // over a write piece
	for i := range x {
		x[i] = uint16(i*2654435761>>7) ^ uint16(i)
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Uint16, 7, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteUint16(x); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if int64(buf.Len()) != int64(len(HeaderBytes(Uint16, 7, 10000)))+2*int64(len(x)) {
		t.Fatalf("%d bytes written", buf.Len())
	}
	r, err := Parse(buf.Bytes(), "x.npy")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]uint16, len(x))
	if err := r.FillUint16(got[:3]); err != nil {
		t.Fatal(err)
	}
	if err := r.Skip(5); err != nil {
		t.Fatal(err)
	}
	if err := r.FillUint16(got[8:]); err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if (i < 3 || i >= 8) && got[i] != x[i] {
			t.Fatalf("element %d: %#x, want %#x", i, got[i], x[i])
		}
	}
	if err := r.FillUint16(got[:1]); err == nil {
		t.Error("read past the end")
	}

	// Big-endian words.
	be := append([]byte(nil), HeaderBytes(">u2", 3)...)
	for _, v := range []uint16{0x3f80, 0x7fc0, 0x0001} {
		be = binary.BigEndian.AppendUint16(be, v)
	}
	r, err = Parse(be, "be.npy")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.FillUint16(got[:3]); err != nil || got[0] != 0x3f80 || got[1] != 0x7fc0 || got[2] != 1 {
		t.Errorf("big-endian: %#x, %v", got[:3], err)
	}

	// Another dtype is not converted.
	var f32 bytes.Buffer
	fw, _ := NewWriter(&f32, Float32, 2)
	fw.WriteFloat32([]float32{1, 2})
	r, _ = Parse(f32.Bytes(), "f.npy")
	if err := r.FillUint16(got[:2]); err == nil || !strings.Contains(err.Error(), "dtype <f4: expected a uint16 array") {
		t.Errorf("float32 array as uint16: %v", err)
	}
}
