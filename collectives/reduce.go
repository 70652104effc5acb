package collectives

import "fmt"

// number is an element type that Local reduces.
type number interface {
	float32 | float64 | int64
}

// checkOp returns an error if op is not a known operator.
func checkOp(op Op) error {
	switch op {
	case Sum, Max, Min:
		return nil
	}
	return fmt.Errorf("unknown reduction operator %v", op)
}

// reduceParts writes into dst the element-wise reduction of the parts'
// inputs (pick returns a deposit's input), combined in rank order,
// ((p0 op p1) op p2) ..., so that every rank computes bitwise the same
// result. Every part must hold len(dst) elements.
func reduceParts[T number](dst []T, parts []deposit, pick func(*deposit) []T, op Op) error {
	for i := range parts {
		if d := pick(&parts[i]); len(d) != len(dst) {
			return fmt.Errorf("rank %d passed %d elements, this rank %d", i, len(d), len(dst))
		}
	}
	copy(dst, pick(&parts[0]))
	for i := 1; i < len(parts); i++ {
		combine(dst, pick(&parts[i]), op)
	}
	return nil
}

// The inputs of a deposit by element type, for the generic collectives.
func f32Of(d *deposit) []float32 { return d.f32 }
func f64Of(d *deposit) []float64 { return d.f64 }
func i64Of(d *deposit) []int64   { return d.i64 }
func bytesOf(d *deposit) []byte  { return d.b }

// grow returns (*s)[:n], reallocating *s when it is too short: scratch
// that a rank reuses from call to call, so that it is allocated once per
// size increase rather than per call.
func grow[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	return (*s)[:n]
}

// combine sets acc[i] = acc[i] op x[i].
func combine[T number](acc, x []T, op Op) {
	x = x[:len(acc)]
	switch op {
	case Sum:
		for i, v := range x {
			acc[i] += v
		}
	case Max:
		for i, v := range x {
			if v > acc[i] {
				acc[i] = v
			}
		}
	case Min:
		for i, v := range x {
			if v < acc[i] {
				acc[i] = v
			}
		}
	default:
		panic(fmt.Sprintf("collectives: unknown reduction operator %v", op))
	}
}

// displacements returns the running sums of counts (the offset of each
// block when the blocks are contiguous in rank order) in displs, grown as
// grow does, and their total, or an error if a count is negative.
func displacements(displs *[]int, counts []int) (d []int, total int, err error) {
	d = grow(displs, len(counts))
	for i, n := range counts {
		if n < 0 {
			return nil, 0, fmt.Errorf("count[%d] = %d is negative", i, n)
		}
		d[i] = total
		total += n
	}
	return d, total, nil
}
