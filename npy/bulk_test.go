package npy

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// bigEndian rewrites a little-endian .npy file of elements of size bytes
// as the same array stored big-endian ('>' dtype, swapped bytes): the same
// values, read through the element-wise path instead of the bulk one.
func bigEndian(le []byte, size int) []byte {
	r, err := Parse(le, "le")
	if err != nil {
		panic(err)
	}
	be := bytes.Clone(le)
	hdr := be[:r.DataOffset]
	i := bytes.Index(hdr, []byte("'<"))
	hdr[i+1] = '>'
	for p := int(r.DataOffset); p < len(be); p += size {
		slices.Reverse(be[p : p+size])
	}
	return be
}

// TestBulkMatchesElementwise reads random arrays of every bulk dtype
// (little-endian, straight into the slice) and the same arrays stored
// big-endian (converted element by element), whole and in uneven pieces,
// and requires both to give the values written, bit for bit.
func TestBulkMatchesElementwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1000
	i32 := make([]int32, n)
	i64 := make([]int64, n)
	f32 := make([]float32, n)
	for i := range n {
		i32[i] = int32(rng.Uint32())
		i64[i] = int64(rng.Uint64())
		f32[i] = math.Float32frombits(rng.Uint32() &^ (0xff << 23)) // finite, subnormal included
	}
	f32[0], f32[1] = float32(math.Inf(-1)), float32(math.Copysign(0, -1))
	files := map[string][]byte{
		"int32":   sample(Int32, []int{n}, func(w *Writer) error { return w.WriteInt32(i32) }),
		"int64":   sample(Int64, []int{n}, func(w *Writer) error { return w.WriteInt64(i64) }),
		"float32": sample(Float32, []int{n}, func(w *Writer) error { return w.WriteFloat32(f32) }),
	}
	sizes := map[string]int{"int32": 4, "int64": 8, "float32": 4}
	for name, le := range files {
		for _, order := range []string{"little", "big"} {
			data := le
			if order == "big" {
				data = bigEndian(le, sizes[name])
			}
			for _, piece := range []int{n, 1, 7, 333} {
				r, err := Parse(data, name+".npy")
				if err != nil {
					t.Fatal(err)
				}
				if (order == "little") != r.bulk(r.t.kind, r.t.size) {
					t.Fatalf("%s %s-endian: bulk path %v", name, order, !(order == "little"))
				}
				var ok bool
				switch name {
				case "int32":
					got := make([]int32, n)
					for p := 0; p < n; p += piece {
						if err = r.FillInt32(got[p:min(n, p+piece)]); err != nil {
							break
						}
					}
					ok = slices.Equal(got, i32)
				case "int64":
					got := make([]int64, n)
					for p := 0; p < n; p += piece {
						if err = r.FillInt64(got[p:min(n, p+piece)]); err != nil {
							break
						}
					}
					ok = slices.Equal(got, i64)
				case "float32":
					got := make([]float32, n)
					for p := 0; p < n; p += piece {
						if err = r.FillFloat32(got[p:min(n, p+piece)]); err != nil {
							break
						}
					}
					ok = slices.EqualFunc(got, f32, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) })
				}
				if err != nil || !ok || r.Remaining() != 0 {
					t.Fatalf("%s %s-endian in pieces of %d: err %v, equal %v, %d left", name, order, piece, err, ok, r.Remaining())
				}
			}
		}
	}
}

// TestBulkErrors: a bool byte other than 0/1, asking for more elements than
// the file has, and a short file are errors naming the file.
func TestBulkErrors(t *testing.T) {
	b := sample(Bool, []int{4}, func(w *Writer) error { return w.WriteBool([]bool{true, false, true, true}) })
	b[len(b)-2] = 2
	r, _ := Parse(b, "mask.npy")
	dst := make([]bool, 4)
	if err := r.FillBool(dst); err == nil || !strings.Contains(err.Error(), "mask.npy: element 2 is 2") {
		t.Fatalf("bool 2: %v", err)
	}
	if slices.Contains(dst, true) {
		t.Fatal("rejected bools left in dst")
	}
	i := sample(Int32, []int{3}, func(w *Writer) error { return w.WriteInt32([]int32{1, 2, 3}) })
	r, _ = Parse(i, "i.npy")
	if err := r.FillInt32(make([]int32, 4)); err == nil || !strings.Contains(err.Error(), "i.npy: 4 elements wanted, 3 left") {
		t.Fatalf("too many: %v", err)
	}
	r, err := NewReader(bytes.NewReader(i[:len(i)-2]), "short.npy")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.FillInt32(make([]int32, 3)); err == nil || !strings.Contains(err.Error(), "short.npy") || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("short: %v", err)
	}
}
