package collectives

// The nonblocking collectives of Local. The input is copied when the call
// is made, so the round is matched in call order and the caller's buffer
// is read by nobody but its own rank; Wait computes the result into it.
// Because the peers read the copy, Wait needs not wait for them, and
// ranks may wait for their requests in different orders, as MPI allows.
// A request that is never waited for keeps its round alive.

// requestKind says what a localRequest computes.
type requestKind int

const (
	reqAllReduce requestKind = iota
	reqAllReduceBF16
	reqBcast
)

// localRequest is a pending nonblocking call of Local. Requests are
// reused (see requests), so a handle must not be waited for after the
// communicator's next nonblocking call.
type localRequest struct {
	c    *localComm
	r    *round
	seq  uint64
	kind requestKind
	name string
	buf  []float32
	op   Op
	root int
	// f32 and u16 hold the copy of the input that the peers read; they
	// keep their memory from one use of the request to the next.
	f32 []float32
	u16 []uint16

	done bool
	err  error
}

// requests are a rank's nonblocking requests on one communicator. A request
// is reused once its owner has waited for it and every peer has read its
// copy, so a steady sequence of calls allocates no request and no copy.
type requests struct {
	all []*localRequest
	// most is the largest input a nonblocking call of the communicator has
	// copied; every copy that grows grows to it, so that a request seldom
	// used does not grow again later.
	most int
}

// request returns a request of c, free for reuse, whose copy holds at
// least n elements of kind's type.
func (c *localComm) request(kind requestKind, n int) *localRequest {
	g := c.g
	var q *localRequest
	g.mu.Lock()
	for _, x := range c.reqs.all {
		if x.done && x.r.read(x.seq, len(g.members)) {
			q = x
			break
		}
	}
	g.mu.Unlock()
	if q == nil {
		q = &localRequest{c: c}
		c.reqs.all = append(c.reqs.all, q)
	}
	c.reqs.most = max(c.reqs.most, n)
	switch kind {
	case reqAllReduceBF16:
		if cap(q.u16) < n {
			q.u16 = make([]uint16, c.reqs.most)
		}
		q.u16 = q.u16[:n]
	default:
		if cap(q.f32) < n {
			q.f32 = make([]float32, c.reqs.most)
		}
		q.f32 = q.f32[:n]
	}
	q.kind, q.done, q.err = kind, false, nil
	return q
}

// start deposits d for q, which will compute into buf.
func (q *localRequest) start(d deposit, buf []float32) {
	q.name, q.op, q.root, q.buf = d.name, d.op, d.root, buf
	q.r, q.seq = q.c.arrive(d)
}

// IAllReduceF32 implements Comm.
func (c *localComm) IAllReduceF32(buf []float32, op Op) (Request, error) {
	const name = "IAllReduceF32"
	if err := checkOp(op); err != nil {
		return nil, c.errorf(name, "%v", err)
	}
	if err := c.g.w.abortError(); err != nil {
		return nil, c.errorf(name, "%w", err)
	}
	c.counters.Add(KindAllReduce, 4*len(buf))
	q := c.request(reqAllReduce, len(buf))
	copy(q.f32, buf)
	q.start(deposit{name: name, op: op, f32: q.f32}, buf)
	return q, nil
}

// IAllReduceBF16 implements Comm. The input is rounded to bfloat16 when
// the call is made.
func (c *localComm) IAllReduceBF16(buf []float32) (Request, error) {
	const name = "IAllReduceBF16"
	if err := c.g.w.abortError(); err != nil {
		return nil, c.errorf(name, "%w", err)
	}
	c.counters.Add(KindAllReduce, 2*len(buf))
	q := c.request(reqAllReduceBF16, len(buf))
	EncodeBF16(q.u16, buf)
	q.start(deposit{name: name, op: Sum, u16: q.u16}, buf)
	return q, nil
}

// Wait implements Request. Waiting again returns the first result, until
// the communicator's next nonblocking call reuses the request.
func (q *localRequest) Wait() error {
	if q.done {
		return q.err
	}
	q.done = true
	q.err = q.c.finish(q.r, q.name, func(r *round) error {
		switch q.kind {
		case reqAllReduceBF16:
			return q.sumBF16(r)
		case reqBcast:
			return q.bcast(r)
		}
		if err := reduceParts(q.buf, r.parts, f32Of, q.op); err != nil {
			return q.c.errorf(q.name, "%v", err)
		}
		return nil
	})
	q.buf = nil
	return q.err
}

// sumBF16 writes the rank-order bfloat16 sum of the round's deposits to
// the request's buffer.
func (q *localRequest) sumBF16(r *round) error {
	buf := q.buf
	for i := range r.parts {
		if d := r.parts[i].u16; len(d) != len(buf) {
			return q.c.errorf(q.name, "rank %d passed %d elements, this rank %d", i, len(d), len(buf))
		}
	}
	for k := range buf {
		acc := r.parts[0].u16[k]
		for i := 1; i < len(r.parts); i++ {
			acc = AddBF16(acc, r.parts[i].u16[k])
		}
		buf[k] = FromBF16(acc)
	}
	return nil
}
