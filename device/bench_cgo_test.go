//go:build cgo

package device_test

import (
	"fmt"
	"testing"

	"scalegnn/device"
	"scalegnn/device/devicetest"
	"scalegnn/spmm"
	"scalegnn/spmm/cpu"
	"scalegnn/spmm/spmmtest"
)

func BenchmarkCPU(b *testing.B) {
	dev := device.NewCPU(0)
	b.Run("Triad", func(b *testing.B) {
		benchTriad(b, dev, func(a, x, y device.Buffer[float32]) { dev.Triad(a, x, y, 3) })
	})
	devicetest.BenchKernels(b, dev, benchRows, benchCols)
}

// BenchmarkSpMM compares the CPU device's SpMM with spmm/cpu's on a
// power-law matrix of 100k rows and 1.6M nonzeros, in GFLOP/s (2 flops
// per nonzero and column), on the same number of threads.
func BenchmarkSpMM(b *testing.B) {
	const rows, nnz = 100_000, 1_600_000
	a := spmmtest.PowerLawCSR(rows, rows, nnz, 1)
	for _, width := range []int{16, 64, 100, 128} {
		x := spmmtest.RandomDense(rows, width, 0, 2)
		flops := func(b *testing.B) {
			b.ReportMetric(2*float64(a.NNZ())*float64(width)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		b.Run(fmt.Sprintf("device/w%d", width), func(b *testing.B) {
			dev := device.NewCPU(0)
			da := dev.UploadCSR(a)
			xb := device.Alloc[float32](dev, len(x.Data))
			device.Upload(dev, xb, 0, x.Data)
			y := device.Matrix(device.Alloc[float32](dev, rows*width), rows, width)
			xm := device.Matrix(xb, rows, width)
			dev.SpMM(y, da, xm)
			for b.Loop() {
				dev.SpMM(y, da, xm)
			}
			flops(b)
		})
		b.Run(fmt.Sprintf("spmm-cpu/w%d", width), func(b *testing.B) {
			be := cpu.New(0)
			y := spmm.NewDense(rows, width)
			be.SpMM(y, a, x)
			for b.Loop() {
				be.SpMM(y, a, x)
			}
			flops(b)
		})
	}
}
