package collectives

import "sync/atomic"

// Kind names a family of collectives for the byte counters.
type Kind int

const (
	KindAllReduce Kind = iota
	KindAllGather
	KindReduceScatter
	KindBcast
	KindAlltoallv
	numKinds
)

var kindNames = [numKinds]string{"allreduce", "allgather", "reducescatter", "bcast", "alltoallv"}

// String returns the kind's name, e.g. allreduce.
func (k Kind) String() string { return kindNames[k] }

// Counters accumulates, per kind of collective, how many calls a rank made
// on one communicator and how many payload bytes it handed in: len(buf) for
// all-reduce and broadcast, len(src) for all-gather and reduce-scatter, the
// sum of sendCounts for alltoallv, each times the element size. These are
// the message sizes a bandwidth model is written in, independent of the
// algorithm the transport uses underneath. Safe for concurrent use.
type Counters struct {
	calls [numKinds]atomic.Int64
	bytes [numKinds]atomic.Int64
}

// Add records one call of kind k with n payload bytes.
func (c *Counters) Add(k Kind, n int) {
	c.calls[k].Add(1)
	c.bytes[k].Add(int64(n))
}

// Calls returns the number of calls of kind k so far.
func (c *Counters) Calls(k Kind) int64 { return c.calls[k].Load() }

// Bytes returns the payload bytes of kind k so far.
func (c *Counters) Bytes(k Kind) int64 { return c.bytes[k].Load() }

// TotalBytes returns the payload bytes over all kinds.
func (c *Counters) TotalBytes() int64 {
	var t int64
	for k := range c.bytes {
		t += c.bytes[k].Load()
	}
	return t
}

// Reset sets every counter to zero.
func (c *Counters) Reset() {
	for k := range c.calls {
		c.calls[k].Store(0)
		c.bytes[k].Store(0)
	}
}
