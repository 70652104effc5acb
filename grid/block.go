package grid

import "fmt"

// Block returns the half-open range [lo, hi) of block i when a dimension of
// length n is cut into parts contiguous blocks. Blocks differ in length by at
// most one: the first n mod parts blocks are one longer. Any n >= 0 works,
// including n < parts (some blocks are then empty), so no dimension needs
// padding.
func Block(n, parts, i int) (lo, hi int) {
	if parts < 1 || i < 0 || i >= parts || n < 0 {
		panic(fmt.Sprintf("grid: Block(n=%d, parts=%d, i=%d) out of range", n, parts, i))
	}
	q, r := n/parts, n%parts
	lo = i*q + min(i, r)
	hi = lo + q
	if i < r {
		hi++
	}
	return lo, hi
}

// Owner returns the block that holds index k of a dimension of length n cut
// into parts blocks (the inverse of Block).
func Owner(n, parts, k int) int {
	if k < 0 || k >= n {
		panic(fmt.Sprintf("grid: Owner(n=%d, parts=%d, k=%d) out of range", n, parts, k))
	}
	q, r := n/parts, n%parts
	if k < r*(q+1) {
		return k / (q + 1)
	}
	return r + (k-r*(q+1))/q
}
