package hugepage

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestMakeZeroedAndSized: Make and MakeResident return what make would,
// at every size around the advice threshold (resident_linux_test.go
// checks that MakeResident's pages are present).
func TestMakeZeroedAndSized(t *testing.T) {
	for name, mk := range map[string]func(int) []float32{"Make": Make[float32], "MakeResident": MakeResident[float32]} {
		for _, n := range []int{0, 1, 1023, 1025, MinBytes/4 - 1, MinBytes / 4, 3 * MinBytes / 4, MinBytes + 12345} {
			s := mk(n)
			if len(s) != n || cap(s) != n {
				t.Fatalf("%s(%d): len %d cap %d", name, n, len(s), cap(s))
			}
			for i, v := range s {
				if v != 0 {
					t.Fatalf("%s(%d)[%d] = %v, want 0", name, n, i, v)
				}
			}
			for i := range s {
				s[i] = float32(i)
			}
			for i, v := range s {
				if v != float32(i) {
					t.Fatalf("%s(%d)[%d] = %v after writing %d", name, n, i, v, i)
				}
			}
		}
	}
}

// TestAdviseHugePages: on Linux with THP in "madvise" or "always" mode, a
// fresh advised array written once is backed by huge pages (its mapping's
// AnonHugePages in /proc/self/smaps). This is the effect the loader relies
// on; it skips where the kernel offers no THP.
func TestAdviseHugePages(t *testing.T) {
	mode, ok := Offered()
	if !ok {
		t.Skipf("transparent huge pages unavailable (%s)", mode)
	}
	const n = 64 << 20
	s := Make[byte](n)
	fallbacks, err := FaultFallbacks()
	if err != nil {
		t.Skip(err)
	}
	for i := 0; i < n; i += 4096 {
		s[i] = 1
	}
	// The middle: the unaligned head shares a mapping with other memory.
	skip, err := CheckFresh(uintptr(unsafe.Pointer(&s[n/2])), n, fallbacks)
	runtime.KeepAlive(s)
	if err != nil {
		t.Errorf("THP %q: %v", mode, err)
	} else if skip != "" {
		t.Skip(skip)
	}
}
