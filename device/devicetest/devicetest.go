// Package devicetest is the conformance suite every device.Device runs, in
// the style of spmm/spmmtest: a device's own test file calls TestDevice
// with an instance, and every operation is checked on the same cases
// (empty, single-row, odd-width, strided and multi-thread-sized operands,
// fixed seeds) against a float64 reference with an explicit tolerance, and
// bit for bit where training needs the last bit: element-wise arithmetic,
// dropout masks (against golden masks drawn by gcn), RMSNorm and the loss
// in gcn's float32 order, the optimizer, bfloat16 rounding, gathers.
// Views are embedded in sentinel padding, so a write outside its view
// fails too. The graph attention operations are checked as a chain, in
// the layer's order (gat.go), the bfloat16 operations against float64
// references from the same bfloat16 inputs (bf16.go). TestAllocs checks that operations on preallocated buffers
// allocate nothing; BenchKernels times a device's kernels in GB/s.
package devicetest

import (
	"testing"

	"scalegnn/device"
)

// Options loosen the suite where a device may round differently from
// the host devices, each with its reason written where it is set. The
// zero Options are the host devices': bit for bit.
type Options struct {
	// ExpULP is how many float32 ulps a softmax gradient entry may differ
	// from gcn's by, for a device whose exp is not Go's math.Exp (both
	// are within 1 ulp in float64, so the float32 results differ only
	// when that straddles a rounding boundary).
	ExpULP int
	// LossRelTol is the relative difference allowed between the loss sum
	// and gcn's float64 sum in row order, for a device that sums the rows
	// in its own (fixed) order with its own log.
	LossRelTol float64
	// SparseBF16 says the device's bfloat16 SpMM multiplies by the
	// sparse matrix's values rounded to bfloat16 (cuSPARSE takes A and B
	// of one type): its results are checked within a wider bound, not
	// against the float32 SpMM bit for bit (bf16.go).
	SparseBF16 bool
}

// TestDevice runs the conformance suite against dev, bit for bit where
// the suite asks it.
func TestDevice(t *testing.T, dev device.Device) { TestDeviceWith(t, dev, Options{}) }

// TestDeviceWith runs the conformance suite against dev with opt's
// tolerances.
func TestDeviceWith(t *testing.T, dev device.Device, opt Options) {
	if dev.Name() == "" || dev.Describe() == "" {
		t.Errorf("device has an empty Name %q or Describe %q", dev.Name(), dev.Describe())
	}
	t.Run("Memory", func(t *testing.T) { testMemory(t, dev) })
	t.Run("Elementwise", func(t *testing.T) { testElementwise(t, dev) })
	t.Run("ReLUBits", func(t *testing.T) { testReLUBits(t, dev) })
	t.Run("Dropout", func(t *testing.T) { testDropout(t, dev) })
	t.Run("RMSNorm", func(t *testing.T) { testRMSNorm(t, dev) })
	t.Run("Loss", func(t *testing.T) { testLoss(t, dev, opt) })
	t.Run("Accuracy", func(t *testing.T) { testAccuracy(t, dev) })
	t.Run("NoClasses", func(t *testing.T) { testNoClasses(t, dev) })
	t.Run("Optim", func(t *testing.T) { testOptim(t, dev) })
	t.Run("BF16", func(t *testing.T) { testBF16(t, dev) })
	t.Run("Gather", func(t *testing.T) { testGather(t, dev) })
	t.Run("SpMM", func(t *testing.T) { testSpMM(t, dev) })
	t.Run("Gemm", func(t *testing.T) { testGemm(t, dev) })
	t.Run("BF16Mat", func(t *testing.T) { testBF16Mat(t, dev) })
	t.Run("SpMMBF16", func(t *testing.T) { testSpMMBF16(t, dev, opt) })
	t.Run("SpMMBF16Masked", func(t *testing.T) { testSpMMBF16Masked(t, dev, opt) })
	t.Run("GemmBF16", func(t *testing.T) { testGemmBF16(t, dev) })
	t.Run("GemmBF16ToBF16", func(t *testing.T) { testGemmBF16ToBF16(t, dev) })
	t.Run("Mixed", func(t *testing.T) { testMixed(t, dev) })
	t.Run("GAT", func(t *testing.T) { testGAT(t, dev) })
	t.Run("Panics", func(t *testing.T) { testPanics(t, dev) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, dev) })
}
