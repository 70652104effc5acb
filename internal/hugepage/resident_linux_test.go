package hugepage

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// resident counts the 4 KiB pages of the whole pages inside s that are
// present in memory (mincore(2)), and the pages counted.
func resident(t *testing.T, s []byte) (present, pages int) {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := (start + 4095) &^ 4095
	hi := (start + uintptr(len(s))) &^ 4095
	vec := make([]byte, (hi-lo)/4096)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); errno != 0 {
		t.Skipf("mincore: %v", errno)
	}
	runtime.KeepAlive(s)
	for _, v := range vec {
		present += int(v & 1)
	}
	return present, len(vec)
}

// TestMakeResidentFaultsIn: every page of a fresh MakeResident array is
// present when it returns, while most of a fresh Make array of the same
// size is not (the check can tell the two apart). It runs in a process
// of its own: in this one, memory other tests touched and freed may be
// handed out again, present already.
func TestMakeResidentFaultsIn(t *testing.T) {
	const child = "HUGEPAGE_RESIDENT_CHILD"
	if os.Getenv(child) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMakeResidentFaultsIn$", "-test.count=1")
		cmd.Env = append(os.Environ(), child+"=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	const n = 48 << 20
	if p, all := resident(t, MakeResident[byte](n)); p != all {
		t.Errorf("MakeResident(%d): %d of %d pages present, want all", n, p, all)
	}
	if p, all := resident(t, Make[byte](n)); p > all/2 {
		t.Skipf("a fresh Make(%d) already has %d of %d pages present: this system cannot tell", n, p, all)
	}
}
