package hugepage

import "syscall"

// advise calls madvise(MADV_HUGEPAGE) on [addr, addr+n). The error is
// ignored on purpose: EINVAL where THP is compiled out, and the advice
// changes no contents, so failing it only keeps the small pages.
func advise(addr, n uintptr) {
	syscall.Syscall(syscall.SYS_MADVISE, addr, n, syscall.MADV_HUGEPAGE)
}
