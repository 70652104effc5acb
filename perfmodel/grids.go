package perfmodel

import (
	"fmt"

	"scalegnn/grid"
)

// Enumerate returns every grid Gd×Gx×Gy×Gz with product ranks, ordered by
// Gd, then Gx, Gy, Gz. d restricts Gd: 0 allows every divisor of ranks
// (mini-batch), d > 0 only that one (full-graph training needs d = 1).
// Every factorisation counts, not only powers of two.
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
	var out []grid.Shape
	for _, gd := range divisors(ranks) {
		if d > 0 && gd != d {
			continue
		}
		cube := ranks / gd
		for _, x := range divisors(cube) {
			for _, y := range divisors(cube / x) {
				out = append(out, grid.Shape{D: gd, X: x, Y: y, Z: cube / x / y})
			}
		}
	}
	return out, nil
}

// divisors returns the positive divisors of n in increasing order.
func divisors(n int) []int {
	var small, large []int
	for i := 1; i*i <= n; i++ {
		if n%i == 0 {
			small = append(small, i)
			if i != n/i {
				large = append(large, n/i)
			}
		}
	}
	for i := len(large) - 1; i >= 0; i-- {
		small = append(small, large[i])
	}
	return small
}

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
