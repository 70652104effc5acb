//go:build cgo

package device_test

import (
	"testing"

	"scalegnn/device"
	"scalegnn/device/devicetest"
)

func TestCPU(t *testing.T) {
	for _, threads := range []int{1, 3} {
		devicetest.TestDevice(t, device.NewCPU(threads))
	}
}

func TestCPUAllocs(t *testing.T) { devicetest.TestAllocs(t, device.NewCPU(3)) }
