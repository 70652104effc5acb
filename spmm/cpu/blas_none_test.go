//go:build noblas

package cpu_test

import (
	"strings"
	"testing"

	"scalegnn/spmm/cpu"
)

// TestNoBLAS checks that a noblas build says in its logs that no BLAS is
// linked, whatever SetBLASThreads is told.
func TestNoBLAS(t *testing.T) {
	cpu.SetBLASThreads(2)
	if cfg := cpu.BLASConfig(); !strings.Contains(cfg, "noblas") || !strings.Contains(cfg, "gonum") {
		t.Errorf("BLASConfig() = %q, want it to name -tags noblas and gonum", cfg)
	}
	if core := cpu.BLASCore(); core != "" {
		t.Errorf("BLASCore() = %q, want \"\"", core)
	}
}
