package device

import "fmt"

// ShapeError is the panic value for programmer misuse: operands whose
// shapes do not agree, views outside their buffer, indices out of range.
// Bad data never reaches a Device unchecked; callers validate input first.
type ShapeError string

func (e ShapeError) Error() string { return "device: " + string(e) }

func shapePanic(format string, args ...any) { panic(ShapeError(fmt.Sprintf(format, args...))) }

func checkSame(name string, dst Mat, ops ...Mat) {
	dst.check(name, "dst")
	for _, a := range ops {
		a.check(name, "operand")
		if a.rows != dst.rows || a.cols != dst.cols {
			shapePanic("%s: dst %v, operand %v", name, dst, a)
		}
	}
}

func checkLen(name string, n, want int) {
	if n != want {
		shapePanic("%s: length %d, want %d", name, n, want)
	}
}

// checkLen2 is checkLen for operand what of operation name, without
// building the combined name unless it panics.
func checkLen2(name, what string, n, want int) {
	if n != want {
		shapePanic("%s %s: length %d, want %d", name, what, n, want)
	}
}
