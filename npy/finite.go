package npy

import "fmt"

// NonFiniteError is a NaN or infinite value found by FillFiniteFloat32:
// element Index (row-major) of the array in file Name, of shape Shape.
type NonFiniteError struct {
	Name  string
	Index int
	Shape []int
	Value float32
}

// RowCol is the element's row and column in a 2-D array (for any other
// shape: row Index, column 0).
func (e *NonFiniteError) RowCol() (row, col int) {
	if len(e.Shape) == 2 && e.Shape[1] > 0 {
		return e.Index / e.Shape[1], e.Index % e.Shape[1]
	}
	return e.Index, 0
}

func (e *NonFiniteError) Error() string {
	if len(e.Shape) == 2 {
		r, c := e.RowCol()
		return fmt.Sprintf("%s: row %d, column %d is %v: expected a finite number", e.Name, r, c, e.Value)
	}
	return fmt.Sprintf("%s: element %d is %v: expected a finite number", e.Name, e.Index, e.Value)
}

// FirstNonFinite is the index of the first NaN or infinite value of x, or
// -1: the one test of finiteness for float32 data read from files.
func FirstNonFinite(x []float32) int {
	for i, v := range x {
		// v-v is 0 for every finite v, NaN for NaN and ±Inf.
		if v-v != 0 {
			return i
		}
	}
	return -1
}

// FillFiniteFloat32 is FillFloat32 that also refuses NaN and infinite
// values with a *NonFiniteError naming the first. Each piece is checked
// as soon as it is read, while it is still in cache.
func (r *Reader) FillFiniteFloat32(dst []float32) error {
	return fill(r, dst, func(p []float32) (int, error) {
		pos := r.pos
		n, err := r.ReadFloat32(p)
		if err != nil {
			return n, err
		}
		if i := FirstNonFinite(p[:n]); i >= 0 {
			return n, &NonFiniteError{Name: r.name, Index: pos + i, Shape: r.Shape, Value: p[i]}
		}
		return n, nil
	})
}
