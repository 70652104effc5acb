//go:build cgo

package gcn

import (
	"errors"
	"os"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
)

// TestConformanceOnCUDA runs the distributed-vs-serial suite on the CUDA
// device, in-process ranks sharing one GPU: 1×1×1, every grid of 6 ranks
// (1×2×3 among them) and of 8 (2×2×2 among them), full graph and
// data-parallel mini-batch, with bfloat16 sums, as the CPU device runs
// it. Skipped without CUDA unless SCALEGNN_REQUIRE_CUDA is set.
func TestConformanceOnCUDA(t *testing.T) {
	dev, err := device.OpenCUDA(device.CUDAOptions{})
	if err != nil {
		if os.Getenv("SCALEGNN_REQUIRE_CUDA") != "" || !errors.Is(err, device.ErrNoCUDA) {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	for _, ranks := range []int{1, 6, 8} {
		suite := DefaultConformance()
		suite.BF16 = true
		if ranks == 8 {
			// 2×2×2 and its data-parallel forms; all 8-rank grids take long.
			suite.Shapes = []grid.Shape{{D: 1, X: 2, Y: 2, Z: 2}, {D: 2, X: 2, Y: 2, Z: 1}, {D: 8, X: 1, Y: 1, Z: 1}}
		}
		for r, err := range collectives.RunLocal(ranks, func(w collectives.Comm) error {
			return errors.Join(Conformance(w, dev, suite)...)
		}) {
			if err != nil {
				t.Errorf("%d ranks, rank %d: %v", ranks, r, err)
			}
		}
	}
}

// TestPrecisionConformanceOnCUDA runs the self-test's suite in mixed
// precision (train.precision = "bf16") on the CUDA device, 1 and 4
// in-process ranks sharing one GPU, to the mixed-precision tolerances:
// cuSPARSE also rounds Â's values to bfloat16 (device.CUDA's SpMMBF16),
// which the reference does not, moving each product by at most 2⁻⁹ of
// its terms, well within them. Skipped without CUDA unless
// SCALEGNN_REQUIRE_CUDA is set.
func TestPrecisionConformanceOnCUDA(t *testing.T) {
	dev, err := device.OpenCUDA(device.CUDAOptions{})
	if err != nil {
		if os.Getenv("SCALEGNN_REQUIRE_CUDA") != "" || !errors.Is(err, device.ErrNoCUDA) {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	suite := DefaultConformance()
	suite.Precision = device.BF16
	for _, ranks := range []int{1, 4} {
		for r, err := range collectives.RunLocal(ranks, func(w collectives.Comm) error {
			return errors.Join(Conformance(w, dev, suite)...)
		}) {
			if err != nil {
				t.Errorf("%d ranks, rank %d: %v", ranks, r, err)
			}
		}
	}
}
