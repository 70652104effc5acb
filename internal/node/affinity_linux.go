package node

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"
)

// Affinity returns the CPUs this process may run on, as a bit set of 64
// CPUs per word (sched_getaffinity of the calling thread; Go starts every
// thread with the process's mask). The buffer grows until the kernel's
// mask fits.
func Affinity() ([]uint64, error) {
	for words := 16; words <= 1<<16; words *= 2 {
		mask := make([]uint64, words)
		n, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, uintptr(8*words), uintptr(unsafe.Pointer(&mask[0])))
		switch {
		case errno == syscall.EINVAL:
			continue // more CPUs than the buffer holds
		case errno != 0:
			return nil, fmt.Errorf("node: sched_getaffinity: %w", errno)
		}
		// The kernel fills n bytes; the rest stays zero.
		_ = n
		return mask, nil
	}
	return nil, errors.New("node: sched_getaffinity: the CPU mask is larger than 2^22 CPUs")
}
