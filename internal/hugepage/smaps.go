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

// AnonHugeKiB is the AnonHugePages of the mapping that holds addr, from
// /proc/self/smaps: how much of it the kernel backs with huge pages. The
// tests read it to check that advised memory got them.
func AnonHugeKiB(addr uintptr) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
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
			return strconv.Atoi(strings.Fields(line)[1])
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("hugepage: no mapping in /proc/self/smaps holds %#x", addr)
}
