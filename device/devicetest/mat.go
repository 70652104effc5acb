package devicetest

import (
	"math"
	"math/rand/v2"
	"testing"

	"scalegnn/device"
	"scalegnn/spmm"
)

// sentinel fills the padding around a view: a kernel that writes outside
// its view changes it.
const sentinel = -12345.5

// hmat is a matrix view on a device, embedded in a padded buffer, and the
// host copy of its values.
type hmat struct {
	rows, cols, stride, off int
	buf                     device.Buffer[float32]
	m                       device.Mat
	want                    []float32 // the view's values as uploaded, row-major
}

// newMat uploads a rows×cols view with pad sentinel elements before it and
// after every row (pad 0: a tight matrix), values drawn by gen.
func newMat(dev device.Device, rows, cols, pad int, rnd *rand.Rand, gen func(*rand.Rand) float32) *hmat {
	h := &hmat{rows: rows, cols: cols, stride: cols + pad, off: pad}
	h.want = make([]float32, rows*cols)
	if gen != nil {
		for k := range h.want {
			h.want[k] = gen(rnd)
		}
	}
	whole := padded(h.want, rows, cols, pad, float32(sentinel))
	h.buf = device.Alloc[float32](dev, len(whole))
	device.Upload(dev, h.buf, 0, whole)
	h.m = device.MatrixStride(h.buf.Slice(h.off, len(whole)), rows, cols, h.stride)
	return h
}

// get downloads the view and fails t if anything outside it changed.
func (h *hmat) get(t *testing.T, dev device.Device, name string) []float32 {
	t.Helper()
	return unpadded(t, dev, name, h.buf, h.rows, h.cols, h.stride, h.off, float32(sentinel))
}

// padded lays the row-major rows×cols matrix v out with pad sentinel
// elements before it and after every row.
func padded[T any](v []T, rows, cols, pad int, sent T) []T {
	stride := cols + pad
	whole := make([]T, pad+rows*stride+pad)
	for k := range whole {
		whole[k] = sent
	}
	for i := range rows {
		copy(whole[pad+i*stride:], v[i*cols:(i+1)*cols])
	}
	return whole
}

// unpadded downloads buf, fails t if an element outside the view
// (rows×cols with stride at off) is not sent any more, and returns the
// view's elements, row-major.
func unpadded[T device.Elem](t *testing.T, dev device.Device, name string, buf device.Buffer[T], rows, cols, stride, off int, sent T) []T {
	t.Helper()
	whole := make([]T, buf.Len())
	device.Download(dev, whole, buf, 0)
	out := make([]T, rows*cols)
	for k, v := range whole {
		k0 := k - off
		i, j := k0/max(stride, 1), k0%max(stride, 1)
		if k0 >= 0 && i < rows && j < cols {
			out[i*cols+j] = v
		} else if v != sent {
			t.Fatalf("%s: wrote outside the view at element %d of the buffer", name, k)
		}
	}
	return out
}

// hbf is a bfloat16 matrix view on a device, embedded in a padded
// buffer, with the bits uploaded and their values widened.
type hbf struct {
	rows, cols, stride, off int
	buf                     device.Buffer[uint16]
	m                       device.MatBF16
	bits                    []uint16  // row-major, as uploaded
	want                    []float32 // bits widened
}

// sentinelBF16 fills the padding around a bfloat16 view.
var sentinelBF16 = spmm.ToBF16(sentinel)

// newBF16 uploads a rows×cols bfloat16 view padded as newMat's, its
// values drawn by gen and rounded (zeros when gen is nil).
func newBF16(dev device.Device, rows, cols, pad int, rnd *rand.Rand, gen func(*rand.Rand) float32) *hbf {
	h := &hbf{rows: rows, cols: cols, stride: cols + pad, off: pad}
	h.bits, h.want = make([]uint16, rows*cols), make([]float32, rows*cols)
	if gen != nil {
		for k := range h.bits {
			h.bits[k] = spmm.ToBF16(gen(rnd))
			h.want[k] = spmm.FromBF16(h.bits[k])
		}
	}
	whole := padded(h.bits, rows, cols, pad, sentinelBF16)
	h.buf = device.Alloc[uint16](dev, len(whole))
	device.Upload(dev, h.buf, 0, whole)
	h.m = device.MatrixStrideBF16(h.buf.Slice(h.off, len(whole)), rows, cols, h.stride)
	return h
}

// get downloads the view's bits and fails t if anything outside it
// changed.
func (h *hbf) get(t *testing.T, dev device.Device, name string) []uint16 {
	t.Helper()
	return unpadded(t, dev, name, h.buf, h.rows, h.cols, h.stride, h.off, sentinelBF16)
}

// normal draws N(0, 1) with one value in five zero and one in fifty −0.
func normal(r *rand.Rand) float32 {
	switch r.IntN(50) {
	case 0:
		return float32(math.Copysign(0, -1))
	case 1, 2, 3, 4, 5, 6, 7, 8, 9, 10:
		return 0
	}
	return float32(r.NormFloat64())
}

func positive(r *rand.Rand) float32 { return float32(0.1 + r.Float64()) }

// shape is one operand shape of the suite.
type shape struct{ rows, cols, pad int }

// shapes: empty, one row, odd widths, widths at and past a cache line and
// a mask word, strided views, and one large enough for the CPU device to
// split it over its workers.
var shapes = []shape{
	{0, 5, 0}, {3, 0, 0}, {1, 1, 0}, {1, 3, 2}, {4, 16, 0}, {5, 17, 3},
	{7, 64, 0}, {6, 65, 1}, {9, 128, 5}, {300, 128, 0}, {257, 130, 3},
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5ca1e)) }

// exact fails t unless got and want agree bit for bit (NaNs of any payload
// agree with each other).
func exact(t *testing.T, name string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	bad := 0
	for k := range got {
		g, w := got[k], want[k]
		if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
			if bad++; bad <= 5 {
				t.Errorf("%s: element %d = %g (%#x), want %g (%#x)", name, k, g, math.Float32bits(g), w, math.Float32bits(w))
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements differ in all", name, bad)
	}
}

// close fails t unless |got − want| <= atol + rtol·|want| everywhere.
func near(t *testing.T, name string, got []float32, want []float64, rtol, atol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	bad := 0
	for k := range got {
		if d := math.Abs(float64(got[k]) - want[k]); !(d <= atol+rtol*math.Abs(want[k])) {
			if bad++; bad <= 5 {
				t.Errorf("%s: element %d = %g, want %g (rtol %g, atol %g)", name, k, got[k], want[k], rtol, atol)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements wrong in all", name, bad)
	}
}

func upload[T device.Elem](dev device.Device, v []T) device.Buffer[T] {
	b := device.Alloc[T](dev, len(v))
	device.Upload(dev, b, 0, v)
	return b
}

func download[T device.Elem](dev device.Device, b device.Buffer[T]) []T {
	v := make([]T, b.Len())
	device.Download(dev, v, b, 0)
	return v
}

func to64(v []float32) []float64 {
	out := make([]float64, len(v))
	for k, x := range v {
		out[k] = float64(x)
	}
	return out
}

// withinULP checks got against want to within ulp float32 ulps (NaNs and
// infinities must match exactly).
func withinULP(t *testing.T, name string, got, want []float32, ulp int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", name, len(got), len(want))
	}
	bad := 0
	for k, g := range got {
		w := want[k]
		if math.Float32bits(g) == math.Float32bits(w) {
			continue
		}
		d := int64(ordered(g)) - int64(ordered(w))
		if math.IsNaN(float64(g)) || math.IsNaN(float64(w)) || math.IsInf(float64(g), 0) || math.IsInf(float64(w), 0) || d > int64(ulp) || d < -int64(ulp) {
			if bad++; bad <= 5 {
				t.Errorf("%s: element %d = %g, want %g within %d ulp", name, k, g, w, ulp)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements differ in all", name, bad)
	}
}

// ordered maps float32 bits to integers in the order of the values, so
// that their difference counts ulps.
func ordered(f float32) int32 {
	b := int32(math.Float32bits(f))
	if b < 0 {
		b = math.MinInt32 - b
	}
	return b
}
