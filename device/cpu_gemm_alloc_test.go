//go:build cgo && !noblas

package device_test

import (
	"testing"

	"scalegnn/device"
	"scalegnn/spmm"
)

// TestCPUGemmAllocs checks that GEMM allocates nothing in the three forms
// training uses, at sizes cut into blocks by rows, by columns and not at
// all: the blocks run on the device's workers. (Under -tags noblas the
// blocks are gonum's Sgemm, which starts goroutines of its own.)
func TestCPUGemmAllocs(t *testing.T) {
	dev := device.NewCPU(3)
	for _, c := range []struct{ m, n, k int }{{1000, 16, 128}, {16, 1000, 128}, {8, 8, 8}} {
		a := device.Matrix(device.Alloc[float32](dev, c.m*c.k), c.m, c.k)
		b := device.Matrix(device.Alloc[float32](dev, c.k*c.n), c.k, c.n)
		bt := device.Matrix(device.Alloc[float32](dev, c.n*c.k), c.n, c.k)
		at := device.Matrix(device.Alloc[float32](dev, c.k*c.m), c.k, c.m)
		dst := device.Matrix(device.Alloc[float32](dev, c.m*c.n), c.m, c.n)
		for _, f := range []struct {
			name string
			run  func()
		}{
			{"NN", func() { dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, a, b, 0, dst) }},
			{"NT", func() { dev.Gemm(spmm.NoTrans, spmm.Trans, 1, a, bt, 0, dst) }},
			{"TN", func() { dev.Gemm(spmm.Trans, spmm.NoTrans, 1, at, b, 0, dst) }},
		} {
			if n := testing.AllocsPerRun(10, f.run); n != 0 {
				t.Errorf("%dx%dx%d %s: Gemm allocates %v times per call", c.m, c.n, c.k, f.name, n)
			}
		}
	}
}
