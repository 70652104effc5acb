package grid

import "fmt"

// Shapes returns every grid Gd×Gx×Gy×Gz of ranks ranks, ordered by Gd,
// then Gx, then Gy (each increasing). d restricts Gd: 0 allows every
// divisor of ranks (data-parallel mini-batch training), d > 0 only that
// one (full-graph training has d = 1). Every factorisation counts, not
// only powers of two. A d that does not divide ranks has no shapes.
//
// It panics when ranks < 1 or d < 0: callers check the numbers they were
// given before asking for their grids.
func Shapes(ranks, d int) []Shape {
	if ranks < 1 || d < 0 {
		panic(fmt.Sprintf("grid: Shapes(%d, %d): need ranks >= 1 and d >= 0", ranks, d))
	}
	var out []Shape
	for _, gd := range Divisors(ranks) {
		if d > 0 && gd != d {
			continue
		}
		cube := ranks / gd
		for _, x := range Divisors(cube) {
			for _, y := range Divisors(cube / x) {
				out = append(out, Shape{D: gd, X: x, Y: y, Z: cube / x / y})
			}
		}
	}
	return out
}

// Divisors returns the positive divisors of n in increasing order (none
// for n < 1).
func Divisors(n int) []int {
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
