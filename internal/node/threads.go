package node

import (
	"fmt"
	"math/bits"
)

// Threads returns the kernel threads of a rank that may use cores cores,
// which sharing ranks (itself included) may use too: cores / sharing,
// rounded down, and at least 1, since a rank always runs. It panics if
// cores or sharing is below 1: both count something that exists.
func Threads(cores, sharing int) int {
	if cores < 1 || sharing < 1 {
		panic(fmt.Sprintf("node: Threads(%d, %d): cores and sharing ranks must be at least 1", cores, sharing))
	}
	return max(1, cores/sharing)
}

// Sharing returns how many of the masks overlap masks[self] (self
// included): the ranks that compete for the cores rank self may use.
// Masks are bit sets of CPUs, 64 per word, all of the same length.
func Sharing(masks [][]uint64, self int) int {
	n := 0
	for _, m := range masks {
		if overlaps(m, masks[self]) {
			n++
		}
	}
	return n
}

func overlaps(a, b []uint64) bool {
	for i := range min(len(a), len(b)) {
		if a[i]&b[i] != 0 {
			return true
		}
	}
	return false
}

// Cores is the number of cores an affinity mask (Affinity) names.
func Cores(mask []uint64) int {
	n := 0
	for _, w := range mask {
		n += bits.OnesCount64(w)
	}
	return n
}
