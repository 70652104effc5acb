package hugepage

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestMakeZeroedAndSized: Make returns what make would, at every size
// around the advice threshold.
func TestMakeZeroedAndSized(t *testing.T) {
	for _, n := range []int{0, 1, MinBytes/4 - 1, MinBytes / 4, 3 * MinBytes / 4, MinBytes + 12345} {
		s := Make[float32](n)
		if len(s) != n || cap(s) != n {
			t.Fatalf("Make(%d): len %d cap %d", n, len(s), cap(s))
		}
		for i, v := range s {
			if v != 0 {
				t.Fatalf("Make(%d)[%d] = %v, want 0", n, i, v)
			}
		}
		for i := range s {
			s[i] = float32(i)
		}
		for i, v := range s {
			if v != float32(i) {
				t.Fatalf("Make(%d)[%d] = %v after writing %d", n, i, v, i)
			}
		}
	}
}

// TestAdviseHugePages: on Linux with THP in "madvise" or "always" mode, a
// fresh advised array written once is backed by huge pages (its mapping's
// AnonHugePages in /proc/self/smaps). This is the effect the loader relies
// on; it skips where the kernel offers no THP.
func TestAdviseHugePages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("huge page advice is Linux only")
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages unavailable (%q, %v)", mode, err)
	}
	const n = 64 << 20
	s := Make[byte](n)
	for i := 0; i < n; i += 4096 {
		s[i] = 1
	}
	// The middle: the unaligned head shares a mapping with other memory.
	addr := uintptr(unsafe.Pointer(&s[n/2]))
	huge := anonHugeKiB(t, addr)
	runtime.KeepAlive(s)
	if huge < 32<<10 {
		t.Errorf("only %d KiB of a fresh 64 MiB advised array is on huge pages (THP %q), want most of it", huge, strings.TrimSpace(string(mode)))
	}
}

// anonHugeKiB is AnonHugePages of the mapping that holds addr.
func anonHugeKiB(t *testing.T, addr uintptr) int {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			lo, hi, ok := strings.Cut(fields[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = ok && err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			v, _ := strconv.Atoi(strings.Fields(line)[1])
			return v
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return 0
}
