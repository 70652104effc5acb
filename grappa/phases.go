package grappa

import "fmt"

// Phases is §3.6's phase-parallel schedule: P partitions (the Schedule's
// workers) trained by M ranks, M at a time. Phase i trains partitions
// i·M … i·M+M−1, rank r the partition i·M + r; every phase runs the
// partitions' steps data-parallel over the M ranks (one gradient
// all-reduce and one optimizer update a step), and the parameters and
// the optimizer state carry into the next phase, so that over an epoch
// every partition trains once. P = M (one phase) is the isolated mode
// of §3.2–3.5, every rank training its own partition the whole epoch;
// M = 1 trains every partition in turn on one rank.
//
// M is the rank count, so the free choice is P: more partitions are
// smaller partitions, whose step needs less memory and whose chunks a
// rank reads in turn.
type Phases struct {
	P, M int
}

// NewPhases checks that m ranks can train p partitions in phases of m.
func NewPhases(p, m int) (Phases, error) {
	if m < 1 || p < m || p%m != 0 {
		return Phases{}, fmt.Errorf("grappa: %d partitions on %d ranks: set grappa.partitions to a multiple of the rank count (0 means one per rank)", p, m)
	}
	return Phases{P: p, M: m}, nil
}

// Count is the number of phases of an epoch, P/M.
func (ph Phases) Count() int { return ph.P / ph.M }

// Partition is the partition rank trains in phase i.
func (ph Phases) Partition(rank, i int) int {
	if rank < 0 || rank >= ph.M || i < 0 || i >= ph.Count() {
		panic(fmt.Sprintf("grappa: Partition(rank %d, phase %d) with %d partitions on %d ranks", rank, i, ph.P, ph.M))
	}
	return i*ph.M + rank
}

// Slot is one partition of the sweep: partition Part (the Schedule's
// worker) at super-epoch SuperEpoch.
type Slot struct {
	SuperEpoch, Part int
}
