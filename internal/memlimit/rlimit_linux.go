package memlimit

import "syscall"

// AddressSpace returns the soft RLIMIT_AS (ulimit -v, prlimit --as) of
// this process, and false when it cannot be read.
func AddressSpace() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil {
		return 0, false
	}
	return r.Cur, true
}
