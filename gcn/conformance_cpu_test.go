//go:build cgo

package gcn

import (
	"errors"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
)

// TestConformanceOnCPU runs the distributed-vs-serial suite on the CPU
// device (the device of training runs) on every grid of 6 ranks, whose
// class and hidden widths leave some ranks empty blocks (5 classes over 6
// ranks): arenas reuse memory, so a kernel that skips such a block leaves
// stale values behind.
func TestConformanceOnCPU(t *testing.T) {
	for r, err := range collectives.RunLocal(6, func(w collectives.Comm) error {
		return errors.Join(Conformance(w, device.NewCPU(1), DefaultConformance())...)
	}) {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}
