package perfmodel

import (
	"fmt"

	"scalegnn/grid"
)

// Enumerate returns grid.Shapes(ranks, d) — every grid Gd×Gx×Gy×Gz with
// product ranks, ordered by Gd, then Gx, Gy, Gz; d = 0 allows every
// divisor of ranks as Gd (mini-batch), d > 0 only that one (full-graph
// training needs d = 1) — after checking the numbers, which come from the
// command line or a job file.
func Enumerate(ranks, d int) ([]grid.Shape, error) {
	if ranks < 1 {
		return nil, fmt.Errorf("perfmodel: %d ranks: need at least 1", ranks)
	}
	if d < 0 {
		return nil, fmt.Errorf("perfmodel: Gd = %d: expected 0 (any) or a positive divisor of %d", d, ranks)
	}
	if d > 0 && ranks%d != 0 {
		return nil, fmt.Errorf("perfmodel: Gd = %d does not divide %d ranks: expected a divisor of %d (%v)", d, ranks, ranks, divisors(ranks))
	}
	return grid.Shapes(ranks, d), nil
}

// divisors returns the positive divisors of n in increasing order.
func divisors(n int) []int { return grid.Divisors(n) }

// Dims is how many of Gx, Gy, Gz exceed 1: 1D, 2D or 3D parallelism.
func Dims(s grid.Shape) int {
	n := 0
	for _, v := range []int{s.X, s.Y, s.Z} {
		if v > 1 {
			n++
		}
	}
	return n
}
