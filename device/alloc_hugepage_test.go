package device

import (
	"runtime"
	"testing"
	"unsafe"

	"scalegnn/internal/hugepage"
)

// TestHostAllocHugePages: a large buffer of a host device (the arenas, the
// bf16 staging) is backed by huge pages once written, as the SpMM's
// gathers need (measured: the R-MAT 18 epoch 9% faster in float32 and
// 15% in bf16, docs/bf16.md). Without the advice the buffer gets none
// where THP is in "madvise" mode, the kernel's default. The advice itself
// must be on the buffer's mapping; the huge pages must follow unless the
// kernel fell back to small pages meanwhile (a fragmented CI runner gave
// one of two buffers none): hugepage.CheckFresh.
func TestHostAllocHugePages(t *testing.T) {
	mode, ok := hugepage.Offered()
	if !ok {
		t.Skipf("transparent huge pages unavailable (%s)", mode)
	}
	for _, dev := range []Device{NewNative(1), Host(1)} {
		const n = 16 << 20 // 64 MiB of float32
		b := Alloc[float32](dev, n)
		h := b.host
		fallbacks, err := hugepage.FaultFallbacks()
		if err != nil {
			t.Skip(err)
		}
		for i := 0; i < n; i += 1024 {
			h[i] = 1
		}
		skip, err := hugepage.CheckFresh(uintptr(unsafe.Pointer(&h[n/2])), 4*n, fallbacks)
		runtime.KeepAlive(h)
		if err != nil {
			t.Errorf("%s (THP %q): %v", dev.Name(), mode, err)
		} else if skip != "" {
			t.Logf("%s: %s", dev.Name(), skip)
		}
	}
}
