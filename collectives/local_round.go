package collectives

import (
	"fmt"
	"sync"
)

// group is the state that the members of one Local communicator share: the
// rounds of collectives in flight. Every collective is one round: each
// member deposits a copy of its input, the last to arrive releases the
// others, each member computes its own output from the deposits, and the
// last to finish reading frees the round.
type group struct {
	w *world
	// members[i] is the world rank of group rank i.
	members []int

	mu     sync.Mutex
	rounds map[uint64]*round
}

func newGroup(w *world, members []int) *group {
	return &group{w: w, members: members, rounds: make(map[uint64]*round)}
}

// round is one collective call of a group, matched across ranks by its
// sequence number (the k-th collective call of every rank on the group).
type round struct {
	// parts, arrived and readers are guarded by the group's mu; parts is
	// read-only once done is closed.
	parts   []deposit
	arrived int
	readers int
	done    chan struct{}

	// splitMu guards split, the communicators a Split creates, by color, so
	// that every member of a color gets the same group.
	splitMu sync.Mutex
	split   map[int]*group
}

// deposit is what one rank hands in to a round.
type deposit struct {
	present bool
	// name, op and root identify the call; they must agree across ranks.
	name string
	op   Op
	root int
	// data is a private copy of the rank's input ([]float32, []float64,
	// []int64 or []byte); nil where the call carries none.
	data any
	// ints carries small integer arguments: counts, or color and key.
	ints []int
}

// arrive deposits d as this rank's part of its next round on the group and
// returns the round. It does not block; wait does.
func (c *localComm) arrive(d deposit) (*round, uint64) {
	d.present = true
	seq := c.seq.Add(1) - 1
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.rounds[seq]
	if r == nil {
		r = &round{parts: make([]deposit, len(g.members)), done: make(chan struct{})}
		g.rounds[seq] = r
	}
	r.parts[c.rank] = d
	r.arrived++
	if r.arrived == len(g.members) {
		close(r.done)
	}
	return r, seq
}

// wait blocks until every member has deposited into r, or the world is
// aborted, or a member that has not deposited has exited (which aborts the
// world, since that member will never come).
func (c *localComm) wait(r *round) error {
	w := c.g.w
	for {
		// Take the notification channel before looking, so that an exit
		// between the look and the select is not missed.
		exitCh := w.exitNotify()
		if err := c.checkGone(r); err != nil {
			return err
		}
		select {
		case <-r.done:
			// A round that completed is good even if the world was aborted
			// meanwhile; the next call reports the abort.
			return nil
		case <-w.aborted:
			return w.abortErr
		case <-exitCh:
		}
	}
}

// checkGone aborts the world if a member that has not deposited into r has
// exited.
func (c *localComm) checkGone(r *round) error {
	g := c.g
	g.mu.Lock()
	missing := -1
	for i, d := range r.parts {
		if !d.present && g.w.hasExited(g.members[i]) {
			missing = i
			break
		}
	}
	g.mu.Unlock()
	if missing < 0 {
		return nil
	}
	g.w.abort(fmt.Errorf("world rank %d returned while world rank %d waits for it in a collective",
		g.members[missing], g.members[c.rank]))
	return g.w.abortErr
}

// leave marks that this rank has finished reading r; the last reader frees
// it.
func (c *localComm) leave(r *round, seq uint64) {
	g := c.g
	g.mu.Lock()
	r.readers++
	if r.readers == len(g.members) {
		delete(g.rounds, seq)
	}
	g.mu.Unlock()
}

// exchange deposits d, waits for every member, checks that every member
// called the same collective and calls read with the round, whose parts are
// the deposits in group rank order, before the round is freed.
func (c *localComm) exchange(d deposit, read func(r *round) error) error {
	if err := c.g.w.abortError(); err != nil {
		return c.errorf(d.name, "%w", err)
	}
	r, seq := c.arrive(d)
	return c.finish(r, seq, d.name, read)
}

// finish is the second half of exchange: wait, check, read, leave.
func (c *localComm) finish(r *round, seq uint64, name string, read func(r *round) error) error {
	if err := c.wait(r); err != nil {
		// The round is not freed: a peer that never arrives never reads it,
		// and the world is aborted anyway.
		return c.errorf(name, "%w", err)
	}
	defer c.leave(r, seq)
	if err := agree(r.parts); err != nil {
		return c.errorf(name, "%v", err)
	}
	return read(r)
}

// agree checks that every rank of a round called the same collective with
// the same operator and root.
func agree(parts []deposit) error {
	p0 := parts[0]
	for i, p := range parts[1:] {
		switch {
		case p.name != p0.name:
			return fmt.Errorf("collective mismatch: rank 0 called %s, rank %d called %s", p0.name, i+1, p.name)
		case p.op != p0.op:
			return fmt.Errorf("operator mismatch: rank 0 passed %v, rank %d passed %v", p0.op, i+1, p.op)
		case p.root != p0.root:
			return fmt.Errorf("root mismatch: rank 0 passed %d, rank %d passed %d", p0.root, i+1, p.root)
		}
	}
	return nil
}

// errorf returns an error that names the collective and this rank.
func (c *localComm) errorf(name, format string, args ...any) error {
	return fmt.Errorf("collectives: local %s on rank %d of %d: %w", name, c.rank, len(c.g.members),
		fmt.Errorf(format, args...))
}
