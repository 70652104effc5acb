package collectives

import (
	"fmt"
	"runtime"
	"sync"
)

// group is the state that the members of one Local communicator share: the
// rounds of collectives in flight. Every collective is one round: each
// member deposits its input, the last to arrive rings the others, each
// member computes its own output from the deposits, and the last to finish
// reading recycles the round.
//
// A steady-state collective allocates nothing: rounds are recycled through
// free, each member has one doorbell channel for every round of the group
// (instead of a channel closed per round), and a deposit is the caller's
// own slice (blocking calls) or a copy the rank keeps in a reused request
// (nonblocking calls), never a fresh clone.
type group struct {
	w *world
	// members[i] is the world rank of group rank i.
	members []int
	// wake[i] is group rank i's doorbell (capacity one): whoever changes a
	// round's state that a member may wait for rings every member, and so
	// do the world's abort and a rank's exit. A ring only says "look
	// again", so a member that finds it rung for another round rechecks
	// and waits again, and a ring is never lost: the waiter looks before
	// it blocks, and the ringer rings after its change. One channel, not
	// a select over the round, the abort and the exits: a blocked
	// goroutine holds a runtime sudog per channel it waits on, and fewer
	// make the runtime's pool of them warm sooner.
	wake []chan struct{}

	mu sync.Mutex
	// live are the rounds in flight, found by sequence number (there are
	// few: one per rank and collective, plus the nonblocking ones); free
	// are the recycled ones.
	live []*round
	free []*round
}

func newGroup(w *world, members []int) *group {
	g := &group{w: w, members: members, wake: make([]chan struct{}, len(members))}
	for i := range g.wake {
		g.wake[i] = make(chan struct{}, 1)
	}
	w.mu.Lock()
	w.groups = append(w.groups, g)
	w.mu.Unlock()
	return g
}

// round is one collective call of a group, matched across ranks by its
// sequence number (the k-th collective call of every rank on the group).
// Its fields are guarded by the group's mu, except that parts is
// read-only once arrived == len(parts).
type round struct {
	seq   uint64
	parts []deposit
	// arrived counts the deposits, reading the members between their
	// start and end of reading, readers those that have ended. A round
	// is recycled when readers reaches len(parts); reuse gives it another
	// seq, which is how a member waiting for the readers sees that they
	// all read it.
	arrived, reading, readers int

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
	// n is a length the peers check (a broadcast's len(buf)); color and
	// key are Split's arguments.
	n, color, key int
	// The rank's input, in the field of its type: the caller's slice for
	// a blocking call (which returns only after every member read it), a
	// copy for a nonblocking one.
	f32 []float32
	f64 []float64
	i64 []int64
	u16 []uint16
	b   []byte
	// counts are AlltoallvF32's sendCounts.
	counts []int
}

// ring rings every member's doorbell. Called with g.mu held or after
// releasing it; a full doorbell already says "look again".
func (g *group) ring() {
	for _, ch := range g.wake {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// arrive deposits d as this rank's part of its next round on the group and
// returns the round. It does not block; wait does.
func (c *localComm) arrive(d deposit) (*round, uint64) {
	d.present = true
	seq := c.seq.Add(1) - 1
	g := c.g
	g.mu.Lock()
	var r *round
	for _, l := range g.live {
		if l.seq == seq {
			r = l
			break
		}
	}
	if r == nil {
		if k := len(g.free); k > 0 {
			r = g.free[k-1]
			g.free = g.free[:k-1]
		} else {
			r = &round{parts: make([]deposit, len(g.members))}
		}
		r.seq, r.arrived, r.reading, r.readers = seq, 0, 0, 0
		g.live = append(g.live, r)
	}
	r.parts[c.rank] = d
	r.arrived++
	full := r.arrived == len(g.members)
	g.mu.Unlock()
	if full {
		g.ring()
	}
	return r, seq
}

// wait blocks until every member has deposited into r and registers this
// rank as reading it, or returns an error when the world is aborted or a
// member that has not deposited has exited (which aborts the world, since
// that member will never come). Once the world is aborted no rank starts
// reading, so that waitRead can return without a peer still reading the
// caller's buffer.
func (c *localComm) wait(r *round) error {
	g, w := c.g, c.g.w
	for {
		g.mu.Lock()
		if err := w.abortError(); err != nil {
			g.mu.Unlock()
			return err
		}
		if r.arrived == len(g.members) {
			r.reading++
			g.mu.Unlock()
			return nil
		}
		g.mu.Unlock()
		if err := c.checkGone(r); err != nil {
			return err
		}
		<-g.wake[c.rank]
	}
}

// checkGone aborts the world if a member that has not deposited into r has
// exited.
func (c *localComm) checkGone(r *round) error {
	g := c.g
	g.mu.Lock()
	missing := -1
	for i := range r.parts {
		if !r.parts[i].present && g.w.hasExited(g.members[i]) {
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

// leave marks that this rank has finished reading r; the last reader
// recycles it and rings the members waiting in waitRead.
func (c *localComm) leave(r *round) {
	g := c.g
	g.mu.Lock()
	r.reading--
	r.readers++
	last := r.readers == len(g.members)
	if last {
		for i := range r.parts {
			r.parts[i] = deposit{} // drop the references to callers' memory
		}
		r.split = nil
		for i, l := range g.live {
			if l == r {
				g.live[i] = g.live[len(g.live)-1]
				g.live = g.live[:len(g.live)-1]
				break
			}
		}
		g.free = append(g.free, r)
	}
	g.mu.Unlock()
	if last {
		g.ring()
	}
}

// read reports whether every member has read round seq (r is the round
// it was given, recycled since if its seq differs). Called with g.mu held.
func (r *round) read(seq uint64, n int) bool { return r.seq != seq || r.readers == n }

// waitRead blocks until every member has read round seq, after which the
// caller's buffers in this rank's deposit are its own again. When the
// world is aborted it returns the abort error once no member is still
// reading (wait lets none start after the abort).
func (c *localComm) waitRead(r *round, seq uint64) error {
	g, w := c.g, c.g.w
	for {
		g.mu.Lock()
		done := r.read(seq, len(g.members))
		busy := r.seq == seq && r.reading > 0
		g.mu.Unlock()
		if done {
			return nil
		}
		if err := w.abortError(); err != nil {
			if !busy {
				return err
			}
			// A reader copies without blocking; let it finish.
			runtime.Gosched()
			continue
		}
		<-g.wake[c.rank]
	}
}

// exchange deposits d, waits for every member, checks that every member
// called the same collective and calls read with the round, whose parts are
// the deposits in group rank order. When shared is set, d holds the
// caller's memory and exchange returns only after every member has read
// it; read must then write its output to the comm's scratch, not to the
// caller's buffers, which peers may still be reading, and the caller
// copies the output once exchange returns.
func (c *localComm) exchange(d deposit, shared bool, read func(r *round) error) error {
	if err := c.g.w.abortError(); err != nil {
		return c.errorf(d.name, "%w", err)
	}
	r, seq := c.arrive(d)
	err := c.finish(r, d.name, read)
	if shared {
		if werr := c.waitRead(r, seq); werr != nil && err == nil {
			err = c.errorf(d.name, "%w", werr)
		}
	}
	return err
}

// finish is the second half of exchange: wait, check, read, leave.
func (c *localComm) finish(r *round, name string, read func(r *round) error) error {
	if err := c.wait(r); err != nil {
		// The round is not recycled: a peer that never arrives never
		// reads it, and the world is aborted anyway.
		return c.errorf(name, "%w", err)
	}
	defer c.leave(r)
	if err := agree(r.parts); err != nil {
		return c.errorf(name, "%v", err)
	}
	return read(r)
}

// agree checks that every rank of a round called the same collective with
// the same operator and root.
func agree(parts []deposit) error {
	p0 := &parts[0]
	for i := 1; i < len(parts); i++ {
		p := &parts[i]
		switch {
		case p.name != p0.name:
			return fmt.Errorf("collective mismatch: rank 0 called %s, rank %d called %s", p0.name, i, p.name)
		case p.op != p0.op:
			return fmt.Errorf("operator mismatch: rank 0 passed %v, rank %d passed %v", p0.op, i, p.op)
		case p.root != p0.root:
			return fmt.Errorf("root mismatch: rank 0 passed %d, rank %d passed %d", p0.root, i, p.root)
		}
	}
	return nil
}

// errorf returns an error that names the collective and this rank.
func (c *localComm) errorf(name, format string, args ...any) error {
	return fmt.Errorf("collectives: local %s on rank %d of %d: %w", name, c.rank, len(c.g.members),
		fmt.Errorf(format, args...))
}
