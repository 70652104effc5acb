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

// TestCPUSpMMBF16Bits checks that the CPU device's bfloat16 SpMMs equal
// the Native device's bit for bit (both sum each row's products in
// nonzero order in float32, and round once with spmm.ToBF16), on every
// specialised width, a power-law matrix and a strided operand.
func TestCPUSpMMBF16Bits(t *testing.T) {
	const n = 3000
	a := spmmtest.PowerLawCSR(n, n, 40000, 11)
	native := device.NewNative(2)
	na := native.UploadCSR(a)
	for _, width := range []int{1, 7, 16, 17, 32, 64, 100, 128} {
		x := spmmtest.RandomDense(n, width, width+3, uint64(width))
		xh := make([]uint16, len(x.Data))
		for k, v := range x.Data {
			xh[k] = spmm.ToBF16(v)
		}
		run := func(dev device.Device, ca *device.CSR) ([]float32, []uint16) {
			xb := device.Alloc[uint16](dev, len(xh))
			device.Upload(dev, xb, 0, xh)
			b := device.MatrixStrideBF16(xb, n, width, x.Stride)
			y := device.Matrix(device.Alloc[float32](dev, n*width), n, width)
			yh := device.MatrixBF16(device.Alloc[uint16](dev, n*width), n, width)
			dev.SpMMBF16(y, ca, b)
			dev.SpMMBF16ToBF16(yh, ca, b)
			got, goth := make([]float32, n*width), make([]uint16, n*width)
			device.DownloadMat(dev, got, y)
			device.DownloadMatBF16(dev, goth, yh)
			return got, goth
		}
		want, wanth := run(native, na)
		for _, threads := range []int{1, 2, 5} {
			dev := device.NewCPU(threads)
			got, goth := run(dev, dev.UploadCSR(a))
			for k := range got {
				if math.Float32bits(got[k]) != math.Float32bits(want[k]) || goth[k] != wanth[k] {
					t.Fatalf("width %d, %d threads: element %d = %g, %#x; Native %g, %#x", width, threads, k, got[k], goth[k], want[k], wanth[k])
				}
			}
		}
	}
}

// TestCPUShareOutput is TestShareOutput on the CPU device.
func TestCPUShareOutput(t *testing.T) { testShareOutput(t, device.NewCPU(2)) }
