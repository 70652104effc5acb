//go:build !linux

package node

import "runtime"

// Affinity returns CPUs 0 to runtime.NumCPU()-1: without a mask to read,
// every rank of a node is taken to share all the cores Go sees.
func Affinity() ([]uint64, error) {
	n := runtime.NumCPU()
	mask := make([]uint64, (n+63)/64)
	for c := range n {
		mask[c/64] |= 1 << (c % 64)
	}
	return mask, nil
}
