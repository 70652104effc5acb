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
	// keep their memory from one use of the request to the next. next32
	// and next16, when set, replace them at the next use: larger storage
	// allocated while the request was in flight.
	f32, next32 []float32
	u16, next16 []uint16

	done bool
	err  error
}

// requests are a rank's nonblocking requests on one communicator. A request
// is reused once its owner has waited for it and every peer has read its
// copy, so a steady sequence of calls allocates no request and no copy.
//
// How many requests are in flight depends on how far the peers lag (a
// request waited for is still in flight until the slowest peer has read
// it), which is timing, not program order. So that the requests are all
// made while the program warms up, not whenever a peer happens to lag
// more than before, they are made ahead: 2k+2 of them once the rank has
// had k requests outstanding at once, each with a copy as large as the
// largest call so far (a peer lags by at most the k requests it has yet
// to wait for and the k it has started beyond them).
type requests struct {
	all []*localRequest
	// outstanding counts the rank's requests not yet waited for, most its
	// largest count; most32 and most16 are the largest inputs copied.
	outstanding, most int
	most32, most16    int
}

// request returns a request of c, free for reuse, whose copy holds at
// least n elements of kind's type.
func (c *localComm) request(kind requestKind, n int) *localRequest {
	rs := &c.reqs
	switch {
	case kind == reqAllReduceBF16 && n > rs.most16:
		rs.most16 = n
		for _, q := range rs.all {
			q.next16 = make([]uint16, n)
		}
	case kind != reqAllReduceBF16 && n > rs.most32:
		rs.most32 = n
		for _, q := range rs.all {
			q.next32 = make([]float32, n)
		}
	}
	rs.outstanding++
	if rs.outstanding > rs.most {
		rs.most = rs.outstanding
		for len(rs.all) < 2*rs.most+2 {
			rs.all = append(rs.all, c.newRequest())
		}
	}
	g := c.g
	var q *localRequest
	g.mu.Lock()
	for _, x := range rs.all {
		if x.done && (x.r == nil || x.r.read(x.seq, len(g.members))) {
			q = x
			break
		}
	}
	g.mu.Unlock()
	if q == nil {
		// More in flight than the requests made ahead: a peer lags more
		// than the bound above, or requests are left unwaited.
		q = c.newRequest()
		rs.all = append(rs.all, q)
	}
	if q.next32 != nil {
		q.f32, q.next32 = q.next32, nil
	}
	if q.next16 != nil {
		q.u16, q.next16 = q.next16, nil
	}
	if kind == reqAllReduceBF16 {
		q.u16 = q.u16[:n]
	} else {
		q.f32 = q.f32[:n]
	}
	q.kind, q.done, q.err = kind, false, nil
	return q
}

// newRequest returns a request of c that is free (done, with no round),
// with copies as large as the largest inputs so far.
func (c *localComm) newRequest() *localRequest {
	return &localRequest{
		c:    c,
		done: true,
		f32:  make([]float32, c.reqs.most32),
		u16:  make([]uint16, c.reqs.most16),
	}
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
	q.c.reqs.outstanding--
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
