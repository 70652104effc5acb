package npy

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWriteLikeNumpy: the writer's bytes equal numpy.save's for the same
// array (testdata/labels.npy, written as numpy does, not by this package).
func TestWriteLikeNumpy(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "prepared", "testdata", "numpy", "labels.npy"))
	if err != nil {
		t.Fatal(err)
	}
	got := sample(Int64, []int{12}, func(w *Writer) error {
		return w.WriteInt64([]int64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, -1})
	})
	if !bytes.Equal(got, want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	if len(formatHeader(Float32, []int{3, 4}))%64 != 0 {
		t.Fatal("header not aligned to 64 bytes")
	}
}

// TestConversions reads each dtype into each element type, against
// values computed by hand.
func TestConversions(t *testing.T) {
	dict := "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }    \n"
	f64 := append([]byte("\x93NUMPY\x01\x00"), byte(len(dict)), 0)
	f64 = append(f64, dict...)
	f64 = append(f64, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f) // 1.5
	f64 = append(f64, 0, 0, 0, 0, 0, 0, 0x04, 0xc0) // -2.5
	r, err := Parse(f64, "f64.npy")
	if err != nil {
		t.Fatal(err)
	}
	x, err := r.ReadAllFloat32()
	if err != nil || !slices.Equal(x, []float32{1.5, -2.5}) {
		t.Fatalf("%v %v", x, err)
	}
	r, _ = Parse(f64, "f64.npy")
	if _, err := r.ReadAllInt32(); err == nil || !strings.Contains(err.Error(), "f64.npy") {
		t.Fatalf("float to int: %v", err)
	}
	i64 := sample(Int64, []int{3}, func(w *Writer) error { return w.WriteInt64([]int64{1, 0, math.MaxInt32 + 1}) })
	r, _ = Parse(i64, "i.npy")
	if _, err := r.ReadAllInt32(); err == nil || !strings.Contains(err.Error(), "element 2") {
		t.Fatalf("int32 overflow: %v", err)
	}
	r, _ = Parse(i64, "i.npy")
	if _, err := r.ReadAllBool(); err == nil || !strings.Contains(err.Error(), "0 or 1") {
		t.Fatalf("bool from 2^31: %v", err)
	}
	b := sample(Bool, []int{3}, func(w *Writer) error { return w.WriteBool([]bool{true, false, true}) })
	r, _ = Parse(b, "b.npy")
	if y, err := r.ReadAllFloat32(); err != nil || !slices.Equal(y, []float32{1, 0, 1}) {
		t.Fatalf("%v %v", y, err)
	}
	if _, err := Parse(b[:len(b)-1], "b.npy"); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated: %v", err)
	}
	for _, bad := range []string{"{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", "{'descr': '<f4', 'shape': (2,), }"} {
		h := []byte("\x93NUMPY\x01\x00")
		h = append(h, byte(len(bad)), 0)
		if _, err := Parse(append(h, bad...), "h.npy"); err == nil || !strings.HasPrefix(err.Error(), "h.npy: ") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestRoundTrip writes and reads back every dtype, several shapes.
func TestRoundTrip(t *testing.T) {
	for _, shape := range [][]int{{0}, {5}, {2, 3}, {}} {
		n := 1
		for _, d := range shape {
			n *= d
		}
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = float32(i) - 0.5
		}
		data := sample(Float32, shape, func(w *Writer) error { return w.WriteFloat32(xs) })
		r, err := Parse(data, "x.npy")
		if err != nil || !slices.Equal(r.Shape, shape) && !(len(shape) == 0 && len(r.Shape) == 0) {
			t.Fatalf("%v: %v %v", shape, r, err)
		}
		got, err := r.ReadAllFloat32()
		if err != nil || !slices.Equal(got, xs) {
			t.Fatalf("%v: %v %v", shape, got, err)
		}
	}
}

// HeaderBytes is NewWriter's header, byte for byte, so a file started with
// it and filled at offsets reads back like one NewWriter wrote.
func TestHeaderBytesMatchesWriter(t *testing.T) {
	for _, shape := range [][]int{{3, 4}, {2708, 7}, {5}} {
		var b bytes.Buffer
		if _, err := NewWriter(&b, Float32, shape...); err != nil {
			t.Fatal(err)
		}
		if h := HeaderBytes(Float32, shape...); !bytes.Equal(h, b.Bytes()) {
			t.Errorf("shape %v: HeaderBytes %q, NewWriter %q", shape, h, b.Bytes())
		}
	}
}
