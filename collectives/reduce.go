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
// data, combined in rank order, ((p0 op p1) op p2) ..., so that every rank
// computes bitwise the same result. Every part must hold len(dst) elements.
func reduceParts[T number](dst []T, parts []deposit, op Op) error {
	for i, p := range parts {
		if d := p.data.([]T); len(d) != len(dst) {
			return fmt.Errorf("rank %d passed %d elements, this rank %d", i, len(d), len(dst))
		}
	}
	copy(dst, parts[0].data.([]T))
	for _, p := range parts[1:] {
		combine(dst, p.data.([]T), op)
	}
	return nil
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
// block when the blocks are contiguous in rank order) and their total, or
// an error if a count is negative.
func displacements(counts []int) (displs []int, total int, err error) {
	displs = make([]int, len(counts))
	for i, n := range counts {
		if n < 0 {
			return nil, 0, fmt.Errorf("count[%d] = %d is negative", i, n)
		}
		displs[i] = total
		total += n
	}
	return displs, total, nil
}
