package devicetest

import (
	"fmt"
	"slices"
	"testing"

	"scalegnn/device"
)

func testMemory(t *testing.T, dev device.Device) {
	b := device.Alloc[float32](dev, 10)
	if got := download(dev, b); !slices.Equal(got, make([]float32, 10)) {
		t.Fatalf("Alloc: %v, want zeros", got)
	}
	device.Upload(dev, b, 3, []float32{1, 2, 3})
	got := make([]float32, 4)
	device.Download(dev, got, b, 2)
	if !slices.Equal(got, []float32{0, 1, 2, 3}) {
		t.Errorf("Upload at 3, Download at 2: %v, want [0 1 2 3]", got)
	}
	s := b.Slice(4, 6)
	if s.Len() != 2 || download(dev, s)[0] != 2 {
		t.Errorf("Slice(4, 6): len %d, %v", s.Len(), download(dev, s))
	}
	k := upload(dev, []uint64{1 << 63, 5})
	if got := download(dev, k); got[0] != 1<<63 || got[1] != 5 {
		t.Errorf("uint64 round trip: %v", got)
	}
	m := device.Matrix(b, 2, 5)
	if m.Rows() != 2 || m.Cols() != 5 || m.Stride() != 5 {
		t.Errorf("Matrix(b, 2, 5) = %v", m)
	}
	v := m.Slice(1, 2, 1, 4)
	if v.Rows() != 1 || v.Cols() != 3 || v.Stride() != 5 {
		t.Errorf("Slice(1, 2, 1, 4) = %v", v)
	}
	// b is [0 0 0 1 2 3 0 0 0 0]: row 1, columns 1..3 of the 2×5 view
	// are elements 6..8.
	device.UploadMat(dev, v, []float32{7, 8, 9})
	got3 := make([]float32, 3)
	device.DownloadMat(dev, got3, v)
	all := download(dev, b)
	if !slices.Equal(got3, []float32{7, 8, 9}) || !slices.Equal(all, []float32{0, 0, 0, 1, 2, 3, 7, 8, 9, 0}) {
		t.Errorf("UploadMat/DownloadMat of a column block: %v, buffer %v", got3, all)
	}
}

// testElementwise checks the exact element-wise operations, out of place
// and in place, against float64 arithmetic rounded once to float32.
func testElementwise(t *testing.T, dev device.Device) {
	for n, s := range shapes {
		r := newRand(uint64(n))
		name := fmt.Sprintf("%dx%d/pad%d", s.rows, s.cols, s.pad)
		a := newMat(dev, s.rows, s.cols, s.pad, r, normal)
		b := newMat(dev, s.rows, s.cols, s.pad+1, r, normal)
		dst := newMat(dev, s.rows, s.cols, s.pad+2, r, normal)
		ref := func(f func(x, y float64) float64) []float32 {
			out := make([]float32, len(a.want))
			for k := range out {
				out[k] = float32(f(float64(a.want[k]), float64(b.want[k])))
			}
			return out
		}

		dev.Fill(dst.m, 2.5)
		exact(t, "Fill "+name, dst.get(t, dev, "Fill"), ref(func(x, y float64) float64 { return 2.5 }))
		dev.Copy(dst.m, a.m)
		exact(t, "Copy "+name, dst.get(t, dev, "Copy"), a.want)
		dev.Add(dst.m, a.m, b.m)
		exact(t, "Add "+name, dst.get(t, dev, "Add"), ref(func(x, y float64) float64 { return x + y }))
		dev.Scale(dst.m, -0.75, a.m)
		exact(t, "Scale "+name, dst.get(t, dev, "Scale"), ref(func(x, y float64) float64 { return -0.75 * x }))
		dev.ReLU(dst.m, a.m)
		exact(t, "ReLU "+name, dst.get(t, dev, "ReLU"), ref(func(x, y float64) float64 { return max(x, 0) }))
		dev.ReLUBackward(dst.m, b.m, a.m)
		exact(t, "ReLUBackward "+name, dst.get(t, dev, "ReLUBackward"), ref(func(x, y float64) float64 {
			if x > 0 {
				return y
			}
			return 0
		}))

		// In place: dst is an operand (the residual add is Add(x, x, r)).
		want := ref(func(x, y float64) float64 { return x + y })
		dev.Add(a.m, a.m, b.m)
		exact(t, "Add in place "+name, a.get(t, dev, "Add in place"), want)
		a.want = want
		want = ref(func(x, y float64) float64 { return max(x, 0) })
		dev.ReLU(a.m, a.m)
		exact(t, "ReLU in place "+name, a.get(t, dev, "ReLU in place"), want)
	}
}
