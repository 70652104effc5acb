package grappa

import "fmt"

// Schedule is the sweep of §3.3 for W workers over C ≥ W chunks. Worker w
// pins a base chunk and, at each super-epoch, pairs it with the next chunk
// in round-robin order; after C−1 super-epochs the base has met every other
// chunk. With C = W (Figure 3: four workers, four chunks) the bases are the
// workers themselves and M = C−1 super-epochs cover every pair of chunks.
// With C > W the bases rotate by W every C−1 super-epochs, so every chunk
// serves as a base once per ⌈C/W⌉ rounds and Cover super-epochs cover every
// pair. With C = 1 (one worker) the partition is the one chunk: the whole
// graph, i.e. full-graph training.
type Schedule struct {
	W, C int
}

// NewSchedule checks that w workers can sweep c chunks.
func NewSchedule(w, c int) (Schedule, error) {
	if w < 1 || c < w {
		return Schedule{}, fmt.Errorf("grappa: %d chunks for %d partitions; set grappa.chunks ≥ grappa.partitions (0 means one per partition)", c, w)
	}
	return Schedule{W: w, C: c}, nil
}

// Partition returns worker w's base and swept chunk at super-epoch s
// (swept == base only when C = 1). Super-epochs beyond Cover repeat the
// sweep.
func (sc Schedule) Partition(w, s int) (base, swept int) {
	if w < 0 || w >= sc.W || s < 0 {
		panic(fmt.Sprintf("grappa: Partition(worker %d, super-epoch %d) with %d workers", w, s, sc.W))
	}
	if sc.C == 1 {
		return 0, 0
	}
	m := sc.C - 1
	round, step := s/m, s%m
	base = (w + round*sc.W) % sc.C
	return base, (base + 1 + step) % sc.C
}

// Cover is the number of super-epochs after which every pair of chunks has
// shared some worker's partition: C−1 per base rotation, ⌈C/W⌉ rotations.
func (sc Schedule) Cover() int {
	if sc.C == 1 {
		return 1
	}
	return (sc.C + sc.W - 1) / sc.W * (sc.C - 1)
}
