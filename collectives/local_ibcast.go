package collectives

import "slices"

// IBcastF32 implements Comm. As IAllReduceF32, root's buf is copied when
// the call is made, so the round is matched in call order; Wait copies the
// root's values into buf on the other ranks.
func (c *localComm) IBcastF32(buf []float32, root int) (Request, error) {
	const name = "IBcastF32"
	if root < 0 || root >= c.Size() {
		return nil, c.errorf(name, "root %d out of range [0, %d)", root, c.Size())
	}
	if err := c.g.w.abortError(); err != nil {
		return nil, c.errorf(name, "%w", err)
	}
	c.counters.Add(KindBcast, 4*len(buf))
	d := deposit{name: name, root: root, ints: []int{len(buf)}}
	if c.rank == root {
		d.data = slices.Clone(buf)
	}
	r, seq := c.arrive(d)
	return &localBcastRequest{c: c, r: r, seq: seq, buf: buf, root: root}, nil
}

// localBcastRequest is a pending IBcastF32 of Local.
type localBcastRequest struct {
	c    *localComm
	r    *round
	seq  uint64
	buf  []float32
	root int
	done bool
	err  error
}

// Wait implements Request. Waiting again returns the first result.
func (q *localBcastRequest) Wait() error {
	if q.done {
		return q.err
	}
	q.done = true
	q.err = q.c.finish(q.r, q.seq, "IBcastF32", func(r *round) error {
		if n := r.parts[q.root].ints[0]; n != len(q.buf) {
			return q.c.errorf("IBcastF32", "root %d passed len(buf) = %d, this rank %d", q.root, n, len(q.buf))
		}
		if q.c.rank != q.root {
			copy(q.buf, r.parts[q.root].data.([]float32))
		}
		return nil
	})
	return q.err
}
