//go:build linux && (amd64 || arm64)

package perfmodel

import (
	"os"
	"syscall"
)

// dropPages asks the kernel to drop f's cached pages (clean after a
// sync), so that the next read comes from the disk.
func dropPages(f *os.File) error {
	const fadvDontNeed = 4 // POSIX_FADV_DONTNEED
	_, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
