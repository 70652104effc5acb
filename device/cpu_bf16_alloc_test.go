//go:build cgo && !noblas

package device_test

import (
	"testing"

	"scalegnn/device"
	"scalegnn/device/devicetest"
)

// TestCPUBF16ProductAllocs: the bfloat16 SpMMs and GEMM allocate nothing
// on the CPU device. (Under -tags noblas GemmBF16's blocks are gonum's
// Sgemm, which starts goroutines of its own, as for Gemm.)
func TestCPUBF16ProductAllocs(t *testing.T) { devicetest.TestBF16ProductAllocs(t, device.NewCPU(3)) }

// TestCPUMixedAllocs: the mixed-precision CPU device's SpMM and Gemm
// allocate nothing once warm.
func TestCPUMixedAllocs(t *testing.T) { devicetest.TestMixedAllocs(t, device.NewCPU(3)) }
