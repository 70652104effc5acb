package collectives

import (
	"cmp"
	"fmt"
	"slices"
	"sync/atomic"
)

// localComm is one rank's handle on a Local communicator.
type localComm struct {
	g    *group
	rank int
	// seq is the sequence number of this rank's next collective on g.
	seq      atomic.Uint64
	counters Counters

	// Scratch the rank's calls reuse, grown to the largest call: the
	// outputs of blocking calls (written while peers may still read the
	// caller's buffers), displacements, and the nonblocking requests.
	// A Comm is used by one goroutine, so they need no lock.
	f32  []float32
	f64  []float64
	i64  []int64
	b    []byte
	ints []int
	reqs requests
}

var _ Comm = (*localComm)(nil)

// Rank implements Comm.
func (c *localComm) Rank() int { return c.rank }

// Size implements Comm.
func (c *localComm) Size() int { return len(c.g.members) }

// Counters implements Comm.
func (c *localComm) Counters() *Counters { return &c.counters }

// Abort implements Comm. For Local it aborts the world (every rank's
// collectives return ErrAborted) and returns; it does not exit the process.
func (c *localComm) Abort(code int) {
	c.g.w.abort(fmt.Errorf("world rank %d called Abort(%d)", c.g.members[c.rank], code))
}

// Barrier implements Comm.
func (c *localComm) Barrier() error {
	return c.exchange(deposit{name: "Barrier"}, false, func(*round) error { return nil })
}

// Split implements Comm. A negative color is MPI_UNDEFINED: the rank gets a
// nil Comm.
func (c *localComm) Split(color, key int) (Comm, error) {
	var sub Comm
	err := c.exchange(deposit{name: "Split", color: color, key: key}, false, func(r *round) error {
		if color < 0 {
			return nil
		}
		parts := r.parts
		// Group ranks of the same color, ordered by key, ties by old rank.
		var same []int
		for i, p := range parts {
			if p.color == color {
				same = append(same, i)
			}
		}
		slices.SortStableFunc(same, func(a, b int) int { return cmp.Compare(parts[a].key, parts[b].key) })
		r.splitMu.Lock()
		defer r.splitMu.Unlock()
		if r.split == nil {
			r.split = make(map[int]*group)
		}
		g := r.split[color]
		if g == nil {
			members := make([]int, len(same))
			for i, old := range same {
				members[i] = c.g.members[old]
			}
			g = newGroup(c.g.w, members)
			r.split[color] = g
		}
		sub = &localComm{g: g, rank: slices.Index(same, c.rank)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sub, nil
}
