//go:build !linux

package memlimit

// AddressSpace reports no address-space limit outside Linux.
func AddressSpace() (uint64, bool) { return 0, false }
