package npy

import (
	"bytes"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the .npy reader: an error or arrays
// of exactly the header's length, never a panic. Seed corpus:
// testdata/fuzz/FuzzParse/.
func FuzzParse(f *testing.F) {
	for _, seed := range [][]byte{
		sample(Int32, []int{3}, func(w *Writer) error { return w.WriteInt32([]int32{1, -2, 3}) }),
		sample(Float32, []int{2, 2}, func(w *Writer) error { return w.WriteFloat32([]float32{1, 2, 3, 4}) }),
		sample(Bool, []int{2}, func(w *Writer) error { return w.WriteBool([]bool{true, false}) }),
		[]byte("\x93NUMPY\x01\x00\x10\x00{'descr': '>u2'}"),
		[]byte("\x93NUMPY\x02\x00\x30\x00\x00\x00{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }\n"),
		[]byte("not numpy"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for k := range 4 {
			r, err := Parse(b, "f.npy")
			if err != nil {
				return
			}
			n := r.Len()
			var got int
			switch k {
			case 0:
				x, err := r.ReadAllInt32()
				if err != nil {
					continue
				}
				got = len(x)
			case 1:
				x, err := r.ReadAllFloat32()
				if err != nil {
					continue
				}
				got = len(x)
			case 2:
				x, err := r.ReadAllBool()
				if err != nil {
					continue
				}
				got = len(x)
			case 3:
				x, err := r.ReadAllInt64()
				if err != nil {
					continue
				}
				got = len(x)
			}
			if got != n {
				t.Fatalf("%d elements for shape %v", got, r.Shape)
			}
		}
	})
}

func sample(descr string, shape []int, fill func(*Writer) error) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, descr, shape...)
	if err != nil {
		panic(err)
	}
	if err := fill(w); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}
