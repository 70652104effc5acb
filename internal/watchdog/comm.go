package watchdog

import "scalegnn/collectives"

// op indexes the collectives a Comm labels.
type op int

const (
	opSplit op = iota
	opBarrier
	opAllReduce
	opAllReduceWait
	opAllGather
	opReduceScatter
	opBcast
	opAlltoallv
	nOps
)

var opNames = [nOps]string{
	"split", "barrier", "all-reduce", "wait for a nonblocking all-reduce",
	"all-gather", "reduce-scatter", "broadcast", "all-to-all",
}

// Comm is a collectives.Comm that tells its Watchdog which collective the
// rank is blocked in, named after the communicator: "all-reduce on the Y
// communicator". It forwards every call unchanged, so results, byte
// counters and errors are the wrapped communicator's. Its Split returns
// Comms of the same Watchdog; SetName names them (grid.New names the
// communicators it splits).
type Comm struct {
	inner  collectives.Comm
	w      *Watchdog
	labels [nOps]string
	// reqs are the labelled requests, reused once waited for, so that a
	// nonblocking call allocates none (a request value boxed into the
	// interface would be one allocation a call).
	reqs []*request
}

var (
	_ collectives.Comm         = (*Comm)(nil)
	_ collectives.NodeSplitter = (*Comm)(nil)
)

// Wrap returns c labelled for w under name ("world", "Y", ...).
func (w *Watchdog) Wrap(c collectives.Comm, name string) *Comm {
	if c == nil {
		panic("watchdog: Wrap: nil communicator")
	}
	wc := &Comm{inner: c, w: w}
	wc.SetName(name)
	return wc
}

// Watchdog returns the watchdog the communicator reports to, so that
// code handed the world can report progress too (jobs.Job.Train).
func (c *Comm) Watchdog() *Watchdog { return c.w }

// SetName names the communicator in the labels of its collectives. Call
// it before the communicator is used.
func (c *Comm) SetName(name string) {
	for k := range c.labels {
		c.labels[k] = opNames[k] + " on the " + name + " communicator"
	}
}

// enter labels the rank as blocked in collective k and returns the label
// it replaced, for leave.
func (c *Comm) enter(k op) *string { return c.w.op.Swap(&c.labels[k]) }

// leave restores the label enter replaced, unless another goroutine's
// collective has relabelled the rank since.
func (c *Comm) leave(k op, prev *string) { c.w.op.CompareAndSwap(&c.labels[k], prev) }

func (c *Comm) Rank() int                       { return c.inner.Rank() }
func (c *Comm) Size() int                       { return c.inner.Size() }
func (c *Comm) Abort(code int)                  { c.inner.Abort(code) }
func (c *Comm) Counters() *collectives.Counters { return c.inner.Counters() }

// Split implements collectives.Comm; the new communicator is labelled "a
// split" until SetName names it.
func (c *Comm) Split(color, key int) (collectives.Comm, error) {
	prev := c.enter(opSplit)
	defer c.leave(opSplit, prev)
	s, err := c.inner.Split(color, key)
	if s == nil || err != nil {
		return s, err
	}
	return c.w.Wrap(s, "split"), nil
}

// SplitNode implements collectives.NodeSplitter. A wrapped communicator
// that does not know its nodes gives every rank a node to itself, as
// callers treat such a communicator.
func (c *Comm) SplitNode() (collectives.Comm, error) {
	prev := c.enter(opSplit)
	defer c.leave(opSplit, prev)
	ns, ok := c.inner.(collectives.NodeSplitter)
	if !ok {
		s, err := c.inner.Split(c.inner.Rank(), 0)
		if err != nil {
			return nil, err
		}
		return c.w.Wrap(s, "node"), nil
	}
	s, err := ns.SplitNode()
	if err != nil {
		return nil, err
	}
	return c.w.Wrap(s, "node"), nil
}

func (c *Comm) Barrier() error {
	prev := c.enter(opBarrier)
	defer c.leave(opBarrier, prev)
	return c.inner.Barrier()
}

func (c *Comm) AllReduceF32(buf []float32, o collectives.Op) error {
	prev := c.enter(opAllReduce)
	defer c.leave(opAllReduce, prev)
	return c.inner.AllReduceF32(buf, o)
}

func (c *Comm) AllReduceF64(buf []float64, o collectives.Op) error {
	prev := c.enter(opAllReduce)
	defer c.leave(opAllReduce, prev)
	return c.inner.AllReduceF64(buf, o)
}

func (c *Comm) AllReduceI64(buf []int64, o collectives.Op) error {
	prev := c.enter(opAllReduce)
	defer c.leave(opAllReduce, prev)
	return c.inner.AllReduceI64(buf, o)
}

func (c *Comm) AllReduceBF16(buf []float32) error {
	prev := c.enter(opAllReduce)
	defer c.leave(opAllReduce, prev)
	return c.inner.AllReduceBF16(buf)
}

func (c *Comm) IAllReduceF32(buf []float32, o collectives.Op) (collectives.Request, error) {
	return c.label(c.inner.IAllReduceF32(buf, o))
}

func (c *Comm) IAllReduceBF16(buf []float32) (collectives.Request, error) {
	return c.label(c.inner.IAllReduceBF16(buf))
}

func (c *Comm) AllGatherF32(dst, src []float32) error {
	prev := c.enter(opAllGather)
	defer c.leave(opAllGather, prev)
	return c.inner.AllGatherF32(dst, src)
}

func (c *Comm) AllGatherVF32(dst, src []float32, counts []int) error {
	prev := c.enter(opAllGather)
	defer c.leave(opAllGather, prev)
	return c.inner.AllGatherVF32(dst, src, counts)
}

func (c *Comm) ReduceScatterF32(dst, src []float32) error {
	prev := c.enter(opReduceScatter)
	defer c.leave(opReduceScatter, prev)
	return c.inner.ReduceScatterF32(dst, src)
}

func (c *Comm) BcastF32(buf []float32, root int) error {
	prev := c.enter(opBcast)
	defer c.leave(opBcast, prev)
	return c.inner.BcastF32(buf, root)
}

func (c *Comm) IBcastF32(buf []float32, root int) (collectives.Request, error) {
	return c.label(c.inner.IBcastF32(buf, root))
}

func (c *Comm) BcastBytes(buf []byte, root int) error {
	prev := c.enter(opBcast)
	defer c.leave(opBcast, prev)
	return c.inner.BcastBytes(buf, root)
}

func (c *Comm) AlltoallvF32(send []float32, sendCounts []int, recv []float32, recvCounts []int) error {
	prev := c.enter(opAlltoallv)
	defer c.leave(opAlltoallv, prev)
	return c.inner.AlltoallvF32(send, sendCounts, recv, recvCounts)
}

// label wraps a started request in one that labels its wait: a request of
// c's that has been waited for, or a new one.
func (c *Comm) label(r collectives.Request, err error) (collectives.Request, error) {
	if err != nil {
		return r, err
	}
	var q *request
	for _, x := range c.reqs {
		if x.done {
			q = x
			break
		}
	}
	if q == nil {
		q = &request{c: c}
		c.reqs = append(c.reqs, q)
	}
	q.r, q.done = r, false
	return q, nil
}

// request labels the wait for a nonblocking collective. It is reused by
// the communicator's next nonblocking call once waited for, so, as the
// wrapped communicator's requests, it must not be waited for again after
// that call.
type request struct {
	r    collectives.Request
	c    *Comm
	done bool
}

func (q *request) Wait() error {
	prev := q.c.enter(opAllReduceWait)
	defer q.c.leave(opAllReduceWait, prev)
	err := q.r.Wait()
	q.done = true
	return err
}
