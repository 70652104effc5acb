package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Offered reports whether the kernel offers transparent huge pages to
// advised memory (Linux, THP in "madvise" or "always" mode) and its mode
// line, for the tests that check that advised memory gets them.
func Offered() (mode string, ok bool) {
	if runtime.GOOS != "linux" {
		return "not Linux", false
	}
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	mode = strings.TrimSpace(string(b))
	if err != nil {
		return err.Error(), false
	}
	return mode, !strings.Contains(mode, "[never]")
}

// Backing is how the kernel backs the mapping that holds an address,
// from /proc/self/smaps.
type Backing struct {
	// AnonHugeKiB is the mapping's AnonHugePages: how much of it is on
	// huge pages now.
	AnonHugeKiB int
	// Advised is whether the mapping carries MADV_HUGEPAGE (VmFlags "hg").
	Advised bool
}

// BackingOf reads the Backing of the mapping that holds addr. The tests
// read it to check that advised memory got huge pages.
func BackingOf(addr uintptr) (Backing, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return Backing{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in, found := false, false
	var b Backing
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			if in {
				break // the next mapping: ours has been read
			}
			lo, hi, ok := strings.Cut(fields[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			e, err2 := strconv.ParseUint(hi, 16, 64)
			in = ok && err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < e
			found = found || in
			continue
		}
		if !in || len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "AnonHugePages:":
			if b.AnonHugeKiB, err = strconv.Atoi(fields[1]); err != nil {
				return Backing{}, fmt.Errorf("hugepage: /proc/self/smaps: %v", err)
			}
		case "VmFlags:":
			for _, fl := range fields[1:] {
				b.Advised = b.Advised || fl == "hg"
			}
		}
	}
	if err := sc.Err(); err != nil {
		return Backing{}, err
	}
	if !found {
		return Backing{}, fmt.Errorf("hugepage: no mapping in /proc/self/smaps holds %#x", addr)
	}
	return b, nil
}

// FaultFallbacks is the kernel's count of page faults in THP memory that
// got small pages because no huge page could be had (thp_fault_fallback
// in /proc/vmstat, system-wide).
func FaultFallbacks() (uint64, error) {
	b, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "thp_fault_fallback "); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("hugepage: no thp_fault_fallback in /proc/vmstat")
}

// CheckFresh is the tests' verdict on a fresh buffer of size bytes that
// was advised and then written, addr in its middle, with fallbacks the
// FaultFallbacks count read before it was written. The advice must be on
// the mapping (a hard error if not). Most of the buffer must be on huge
// pages, unless the kernel fell back to small pages meanwhile: then the
// machine had no huge pages to give (memory fragmented, as on a busy CI
// runner), which is not the advice's fault, and skip says so.
func CheckFresh(addr uintptr, size int, fallbacks uint64) (skip string, err error) {
	b, err := BackingOf(addr)
	if err != nil {
		return err.Error(), nil
	}
	if !b.Advised {
		return "", fmt.Errorf("the mapping of a fresh %d MiB buffer carries no MADV_HUGEPAGE (VmFlags without hg)", size>>20)
	}
	if b.AnonHugeKiB >= size>>11 {
		return "", nil
	}
	after, ferr := FaultFallbacks()
	if ferr == nil && after > fallbacks {
		return fmt.Sprintf("advised, but the kernel had no huge pages to give: %d KiB of %d MiB on huge pages, thp_fault_fallback %d -> %d", b.AnonHugeKiB, size>>20, fallbacks, after), nil
	}
	return "", fmt.Errorf("%d KiB of a fresh advised %d MiB buffer on huge pages and no THP fault fell back, want at least half", b.AnonHugeKiB, size>>20)
}
