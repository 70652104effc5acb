package device_test

import (
	"testing"

	"scalegnn/device"
	"scalegnn/device/devicetest"
)

// Benchmark operands: 262144×128 float32, 128 MiB each, beyond the last-level
// cache of one core complex (the kernels need about 1 GiB in all).
const benchRows, benchCols = 1 << 18, 128

// benchTriad reports STREAM's triad (a = b + s·c, 12 bytes per element)
// in GB/s, the yardstick for the kernels' GB/s in the same run.
func benchTriad(b *testing.B, dev device.Device, triad func(a, x, y device.Buffer[float32])) {
	n := benchRows * benchCols
	a, x, y := device.Alloc[float32](dev, n), device.Alloc[float32](dev, n), device.Alloc[float32](dev, n)
	b.SetBytes(12 * int64(n))
	triad(a, x, y) // touch every page outside the timing
	for b.Loop() {
		triad(a, x, y)
	}
}

func BenchmarkNative(b *testing.B) {
	dev := device.NewNative(0)
	b.Run("Triad", func(b *testing.B) {
		benchTriad(b, dev, func(a, x, y device.Buffer[float32]) { device.TriadNative(a, x, y, 3) })
	})
	devicetest.BenchKernels(b, dev, benchRows, benchCols)
}
