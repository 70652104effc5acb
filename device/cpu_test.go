//go:build cgo

package device_test

import (
	"math"
	"runtime"
	"testing"
	"time"

	"scalegnn/device"
	"scalegnn/device/devicetest"
	"scalegnn/spmm"
	"scalegnn/spmm/spmmtest"
)

func TestCPU(t *testing.T) {
	for _, threads := range []int{1, 3} {
		devicetest.TestDevice(t, device.NewCPU(threads))
	}
}

func TestCPUAllocs(t *testing.T) { devicetest.TestAllocs(t, device.NewCPU(3)) }

// TestCPUSpMMBits checks that the CPU device's SpMM kernel sums exactly as
// spmm.Native does (as spmm/cpu's is meant to), on every specialised width
// and a power-law matrix, so that moving gcn onto the device keeps
// training bit-identical.
func TestCPUSpMMBits(t *testing.T) {
	a := spmmtest.PowerLawCSR(3000, 3000, 40000, 7)
	for _, width := range []int{1, 7, 16, 17, 32, 64, 100, 128} {
		x := spmmtest.RandomDense(3000, width, width+3, uint64(width))
		want := spmm.NewDense(3000, width)
		spmm.NewNative(1).SpMM(want, a, x)
		for _, threads := range []int{1, 2, 5} {
			dev := device.NewCPU(threads)
			xb := device.Alloc[float32](dev, len(x.Data))
			device.Upload(dev, xb, 0, x.Data)
			db := device.Alloc[float32](dev, 3000*width)
			dev.SpMM(device.Matrix(db, 3000, width), dev.UploadCSR(a), device.MatrixStride(xb, 3000, width, x.Stride))
			got := make([]float32, 3000*width)
			device.Download(dev, got, db, 0)
			for k := range got {
				if math.Float32bits(got[k]) != math.Float32bits(want.Data[k]) {
					t.Fatalf("width %d, %d threads: element %d = %g, spmm.Native %g", width, threads, k, got[k], want.Data[k])
				}
			}
		}
	}
}

// TestCPUSpMMAllocs checks that SpMM on an uploaded CSR allocates nothing
// (the row chunks are cut once, at upload), at a size split over workers.
func TestCPUSpMMAllocs(t *testing.T) {
	dev := device.NewCPU(3)
	a := dev.UploadCSR(spmmtest.PowerLawCSR(2000, 2000, 20000, 3))
	x := device.Alloc[float32](dev, 2000*32)
	y := device.Alloc[float32](dev, 2000*32)
	if n := testing.AllocsPerRun(20, func() {
		dev.SpMM(device.Matrix(y, 2000, 32), a, device.Matrix(x, 2000, 32))
	}); n != 0 {
		t.Errorf("SpMM allocates %v times per call", n)
	}
}

// TestCPUWorkersStop checks that the worker goroutines of unreachable CPU
// devices stop, so that creating devices does not leak goroutines.
func TestCPUWorkersStop(t *testing.T) {
	runtime.GC()
	before := runtime.NumGoroutine()
	for range 10 {
		dev := device.NewCPU(4)
		b := device.Alloc[float32](dev, 1<<16)
		dev.Fill(device.Matrix(b, 1<<8, 1<<8), 1) // wakes the workers
	}
	for range 100 {
		runtime.GC()
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%d goroutines after dropping 10 devices of 4 threads, %d before", runtime.NumGoroutine(), before)
}
