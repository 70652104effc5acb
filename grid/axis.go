package grid

import "fmt"

// Axis is one of the three axes of the 3D grid of a replica.
type Axis int

const (
	X Axis = iota
	Y
	Z
)

func (a Axis) String() string {
	switch a {
	case X:
		return "X"
	case Y:
		return "Y"
	case Z:
		return "Z"
	}
	return fmt.Sprintf("Axis(%d)", int(a))
}

// Rotation returns the axes (P, Q, R) of GCN layer l: rot^l(X, Y, Z) with
// rot(P, Q, R) = (R, P, Q). With this rotation the output layout of layer l
// (rows R, columns P) is the input layout of layer l+1 (rows P', columns Q'),
// so no data moves between layers.
func Rotation(l int) (p, q, r Axis) {
	if l < 0 {
		panic(fmt.Sprintf("grid: negative layer %d", l))
	}
	switch l % 3 {
	case 0:
		return X, Y, Z
	case 1:
		return Z, X, Y
	default:
		return Y, Z, X
	}
}

// Third returns the axis that is neither a nor b (a != b).
func Third(a, b Axis) Axis {
	if a == b {
		panic(fmt.Sprintf("grid: Third of equal axes %v", a))
	}
	return 3 - a - b
}
