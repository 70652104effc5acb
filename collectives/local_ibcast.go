package collectives

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
	n := 0
	if c.rank == root {
		n = len(buf)
	}
	q := c.request(reqBcast, n)
	d := deposit{name: name, root: root, n: len(buf)}
	if c.rank == root {
		copy(q.f32, buf)
		d.f32 = q.f32
	}
	q.start(d, buf)
	return q, nil
}

// bcast copies the root's values into the request's buffer.
func (q *localRequest) bcast(r *round) error {
	if n := r.parts[q.root].n; n != len(q.buf) {
		return q.c.errorf(q.name, "root %d passed len(buf) = %d, this rank %d", q.root, n, len(q.buf))
	}
	if q.c.rank != q.root {
		copy(q.buf, r.parts[q.root].f32)
	}
	return nil
}
