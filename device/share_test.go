package device_test

import (
	"testing"

	"scalegnn/device"
)

// TestShareOutput checks the host devices' Share of an output: an
// operation writes into the caller's slice, and the download into that
// same slice leaves it intact, while a download of a view of it (another
// slice of the same memory, or a strided block) still copies.
func TestShareOutput(t *testing.T) { testShareOutput(t, device.NewNative(1)) }

func testShareOutput(t *testing.T, dev device.Device) {
	t.Helper()
	out := make([]float32, 6)
	z := device.Matrix(device.Share(dev, out), 3, 2)
	dev.Fill(z, 2.5)
	for i, v := range out {
		if v != 2.5 {
			t.Fatalf("%s: out[%d] = %v after Fill of its Share, want 2.5", dev.Describe(), i, v)
		}
	}
	device.DownloadMat(dev, out, z)
	for i, v := range out {
		if v != 2.5 {
			t.Fatalf("%s: out[%d] = %v after a download into itself, want 2.5", dev.Describe(), i, v)
		}
	}
	in := []float32{1, 2, 3, 4, 5, 6}
	y := device.Matrix(device.Share(dev, in), 3, 2)
	got := make([]float32, 2)
	device.DownloadMat(dev, got, y.Slice(1, 2, 0, 2))
	if got[0] != 3 || got[1] != 4 {
		t.Fatalf("%s: row 1 downloaded as %v, want [3 4]", dev.Describe(), got)
	}
	col := make([]float32, 3)
	device.DownloadMat(dev, col, y.Slice(0, 3, 1, 2))
	if col[0] != 2 || col[1] != 4 || col[2] != 6 {
		t.Fatalf("%s: column 1 downloaded as %v, want [2 4 6]", dev.Describe(), col)
	}
	// The download into in itself, from a view that starts at its
	// second row, must move the rows up, not skip.
	device.DownloadMat(dev, in[:4], y.Slice(1, 3, 0, 2))
	if in[0] != 3 || in[1] != 4 || in[2] != 5 || in[3] != 6 {
		t.Fatalf("%s: rows 1-2 downloaded to the front as %v, want [3 4 5 6]", dev.Describe(), in[:4])
	}
}
