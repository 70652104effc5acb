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
// where THP is in "madvise" mode, the kernel's default.
func TestHostAllocHugePages(t *testing.T) {
	mode, ok := hugepage.Offered()
	if !ok {
		t.Skipf("transparent huge pages unavailable (%s)", mode)
	}
	for _, dev := range []Device{NewNative(1), Host(1)} {
		const n = 16 << 20 // 64 MiB of float32
		b := Alloc[float32](dev, n)
		h := b.host
		for i := 0; i < n; i += 1024 {
			h[i] = 1
		}
		huge, err := hugepage.AnonHugeKiB(uintptr(unsafe.Pointer(&h[n/2])))
		runtime.KeepAlive(h)
		if err != nil {
			t.Skip(err)
		}
		if huge < 32<<10 {
			t.Errorf("%s: %d KiB of a fresh 64 MiB buffer on huge pages (THP %q), want most of it", dev.Name(), huge, mode)
		}
	}
}
