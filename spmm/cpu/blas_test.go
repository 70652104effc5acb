//go:build !noblas

package cpu_test

import (
	"strings"
	"testing"

	"scalegnn/spmm/cpu"
)

func TestBLASConfig(t *testing.T) {
	cfg := cpu.BLASConfig()
	t.Logf("BLAS: %q", cfg)
	if cfg != "" && !strings.Contains(cfg, "threads=") {
		t.Errorf("BLASConfig() = %q, want a threads= field", cfg)
	}
	cpu.SetBLASThreads(2)
	if cfg := cpu.BLASConfig(); cfg != "" && !strings.HasSuffix(cfg, "threads=2") {
		t.Errorf("after SetBLASThreads(2): %q", cfg)
	}
	cpu.SetBLASThreads(1)
}
