//go:build cgo

package device_test

import (
	"testing"

	"scalegnn/device"
	"scalegnn/device/devicetest"
)

func BenchmarkCPU(b *testing.B) {
	dev := device.NewCPU(0)
	b.Run("Triad", func(b *testing.B) {
		benchTriad(b, dev, func(a, x, y device.Buffer[float32]) { dev.Triad(a, x, y, 3) })
	})
	devicetest.BenchKernels(b, dev, benchRows, benchCols)
}
