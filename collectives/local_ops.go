package collectives

import "slices"

// The data collectives of Local. Each rank deposits a private copy of its
// input; after the round completes, each rank computes its own output from
// the deposits and checks the sizes that the other ranks handed in.

// AllReduceF32 implements Comm.
func (c *localComm) AllReduceF32(buf []float32, op Op) error {
	return localAllReduce(c, "AllReduceF32", buf, op, 4)
}

// AllReduceF64 implements Comm.
func (c *localComm) AllReduceF64(buf []float64, op Op) error {
	return localAllReduce(c, "AllReduceF64", buf, op, 8)
}

// AllReduceI64 implements Comm.
func (c *localComm) AllReduceI64(buf []int64, op Op) error {
	return localAllReduce(c, "AllReduceI64", buf, op, 8)
}

func localAllReduce[T number](c *localComm, name string, buf []T, op Op, elemSize int) error {
	if err := checkOp(op); err != nil {
		return c.errorf(name, "%v", err)
	}
	c.counters.Add(KindAllReduce, elemSize*len(buf))
	return c.exchange(deposit{name: name, op: op, data: slices.Clone(buf)}, func(r *round) error {
		if err := reduceParts(buf, r.parts, op); err != nil {
			return c.errorf(name, "%v", err)
		}
		return nil
	})
}

// IAllReduceF32 implements Comm. The input is copied when the call is made,
// so the round is matched in call order; Wait computes the result into buf.
// A request that is never waited for keeps its round alive.
func (c *localComm) IAllReduceF32(buf []float32, op Op) (Request, error) {
	const name = "IAllReduceF32"
	if err := checkOp(op); err != nil {
		return nil, c.errorf(name, "%v", err)
	}
	if err := c.g.w.abortError(); err != nil {
		return nil, c.errorf(name, "%w", err)
	}
	c.counters.Add(KindAllReduce, 4*len(buf))
	r, seq := c.arrive(deposit{name: name, op: op, data: slices.Clone(buf)})
	return &localRequest{c: c, r: r, seq: seq, buf: buf, op: op, name: name}, nil
}

// localRequest is a pending IAllReduceF32 or IAllReduceBF16 of Local.
type localRequest struct {
	c    *localComm
	r    *round
	seq  uint64
	buf  []float32
	op   Op
	name string
	bf16 bool
	done bool
	err  error
}

// Wait implements Request. Waiting again returns the first result.
func (q *localRequest) Wait() error {
	if q.done {
		return q.err
	}
	q.done = true
	q.err = q.c.finish(q.r, q.seq, q.name, func(r *round) error {
		if q.bf16 {
			return q.c.sumBF16(q.name, q.buf, r)
		}
		if err := reduceParts(q.buf, r.parts, q.op); err != nil {
			return q.c.errorf(q.name, "%v", err)
		}
		return nil
	})
	return q.err
}

// AllReduceBF16 implements Comm: the ranks' bfloat16 values are summed in
// rank order with AddBF16.
func (c *localComm) AllReduceBF16(buf []float32) error {
	const name = "AllReduceBF16"
	c.counters.Add(KindAllReduce, 2*len(buf))
	return c.exchange(deposit{name: name, op: Sum, data: encodeBF16(buf)}, func(r *round) error {
		return c.sumBF16(name, buf, r)
	})
}

// IAllReduceBF16 implements Comm. As IAllReduceF32, the input is copied
// (rounded) when the call is made and Wait computes the result.
func (c *localComm) IAllReduceBF16(buf []float32) (Request, error) {
	const name = "IAllReduceBF16"
	if err := c.g.w.abortError(); err != nil {
		return nil, c.errorf(name, "%w", err)
	}
	c.counters.Add(KindAllReduce, 2*len(buf))
	r, seq := c.arrive(deposit{name: name, op: Sum, data: encodeBF16(buf)})
	return &localRequest{c: c, r: r, seq: seq, buf: buf, op: Sum, name: name, bf16: true}, nil
}

func encodeBF16(buf []float32) []uint16 {
	h := make([]uint16, len(buf))
	EncodeBF16(h, buf)
	return h
}

// sumBF16 writes the rank-order bfloat16 sum of the round's deposits to buf.
func (c *localComm) sumBF16(name string, buf []float32, r *round) error {
	for i, p := range r.parts {
		if d := p.data.([]uint16); len(d) != len(buf) {
			return c.errorf(name, "rank %d passed %d elements, this rank %d", i, len(d), len(buf))
		}
	}
	acc := slices.Clone(r.parts[0].data.([]uint16))
	for _, p := range r.parts[1:] {
		for i, h := range p.data.([]uint16) {
			acc[i] = AddBF16(acc[i], h)
		}
	}
	DecodeBF16(buf, acc)
	return nil
}

// AllGatherF32 implements Comm.
func (c *localComm) AllGatherF32(dst, src []float32) error {
	const name = "AllGatherF32"
	if len(dst) != c.Size()*len(src) {
		return c.errorf(name, "len(dst) = %d, want Size()*len(src) = %d*%d", len(dst), c.Size(), len(src))
	}
	c.counters.Add(KindAllGather, 4*len(src))
	return c.exchange(deposit{name: name, data: slices.Clone(src)}, func(r *round) error {
		for i, p := range r.parts {
			d := p.data.([]float32)
			if len(d) != len(src) {
				return c.errorf(name, "rank %d passed len(src) = %d, this rank %d", i, len(d), len(src))
			}
			copy(dst[i*len(src):], d)
		}
		return nil
	})
}

// AllGatherVF32 implements Comm.
func (c *localComm) AllGatherVF32(dst, src []float32, counts []int) error {
	const name = "AllGatherVF32"
	if len(counts) != c.Size() {
		return c.errorf(name, "len(counts) = %d, want Size() = %d", len(counts), c.Size())
	}
	displs, total, err := displacements(counts)
	if err != nil {
		return c.errorf(name, "counts: %v", err)
	}
	if counts[c.rank] != len(src) {
		return c.errorf(name, "counts[%d] = %d, but len(src) = %d", c.rank, counts[c.rank], len(src))
	}
	if len(dst) != total {
		return c.errorf(name, "len(dst) = %d, want the sum of counts %d", len(dst), total)
	}
	c.counters.Add(KindAllGather, 4*len(src))
	return c.exchange(deposit{name: name, data: slices.Clone(src)}, func(r *round) error {
		for i, p := range r.parts {
			d := p.data.([]float32)
			if len(d) != counts[i] {
				return c.errorf(name, "rank %d passed len(src) = %d, but counts[%d] = %d", i, len(d), i, counts[i])
			}
			copy(dst[displs[i]:], d)
		}
		return nil
	})
}

// ReduceScatterF32 implements Comm. Block i of the result is the sum over
// ranks of block i of src, added in rank order.
func (c *localComm) ReduceScatterF32(dst, src []float32) error {
	const name = "ReduceScatterF32"
	n := len(dst)
	if len(src) != c.Size()*n {
		return c.errorf(name, "len(src) = %d, want Size()*len(dst) = %d*%d", len(src), c.Size(), n)
	}
	c.counters.Add(KindReduceScatter, 4*len(src))
	return c.exchange(deposit{name: name, data: slices.Clone(src)}, func(r *round) error {
		blocks := make([]deposit, len(r.parts))
		for i, p := range r.parts {
			d := p.data.([]float32)
			if len(d) != len(src) {
				return c.errorf(name, "rank %d passed len(src) = %d, this rank %d", i, len(d), len(src))
			}
			blocks[i].data = d[c.rank*n : (c.rank+1)*n]
		}
		if err := reduceParts(dst, blocks, Sum); err != nil {
			return c.errorf(name, "%v", err)
		}
		return nil
	})
}

// BcastF32 implements Comm.
func (c *localComm) BcastF32(buf []float32, root int) error {
	return localBcast(c, "BcastF32", buf, root, 4)
}

// BcastBytes implements Comm.
func (c *localComm) BcastBytes(buf []byte, root int) error {
	return localBcast(c, "BcastBytes", buf, root, 1)
}

func localBcast[T float32 | byte](c *localComm, name string, buf []T, root, elemSize int) error {
	if root < 0 || root >= c.Size() {
		return c.errorf(name, "root %d out of range [0, %d)", root, c.Size())
	}
	c.counters.Add(KindBcast, elemSize*len(buf))
	d := deposit{name: name, root: root, ints: []int{len(buf)}}
	if c.rank == root {
		d.data = slices.Clone(buf)
	}
	return c.exchange(d, func(r *round) error {
		if n := r.parts[root].ints[0]; n != len(buf) {
			return c.errorf(name, "root %d passed len(buf) = %d, this rank %d", root, n, len(buf))
		}
		if c.rank != root {
			copy(buf, r.parts[root].data.([]T))
		}
		return nil
	})
}

// AlltoallvF32 implements Comm. send and recv may be longer than the sums
// of the counts; their tails are neither read nor written.
func (c *localComm) AlltoallvF32(send []float32, sendCounts []int, recv []float32, recvCounts []int) error {
	const name = "AlltoallvF32"
	if len(sendCounts) != c.Size() || len(recvCounts) != c.Size() {
		return c.errorf(name, "len(sendCounts) = %d, len(recvCounts) = %d, want Size() = %d",
			len(sendCounts), len(recvCounts), c.Size())
	}
	_, sendTotal, err := displacements(sendCounts)
	if err != nil {
		return c.errorf(name, "sendCounts: %v", err)
	}
	rdispls, recvTotal, err := displacements(recvCounts)
	if err != nil {
		return c.errorf(name, "recvCounts: %v", err)
	}
	if len(send) < sendTotal || len(recv) < recvTotal {
		return c.errorf(name, "len(send) = %d, len(recv) = %d, want at least the sums of the counts %d, %d",
			len(send), len(recv), sendTotal, recvTotal)
	}
	c.counters.Add(KindAlltoallv, 4*sendTotal)
	d := deposit{name: name, data: slices.Clone(send[:sendTotal]), ints: slices.Clone(sendCounts)}
	return c.exchange(d, func(r *round) error {
		for j, p := range r.parts {
			// Rank j's block for this rank starts after its blocks for
			// ranks 0 .. rank-1.
			off := 0
			for _, n := range p.ints[:c.rank] {
				off += n
			}
			n := p.ints[c.rank]
			if n != recvCounts[j] {
				return c.errorf(name, "rank %d sends %d elements to rank %d, but recvCounts[%d] = %d",
					j, n, c.rank, j, recvCounts[j])
			}
			copy(recv[rdispls[j]:rdispls[j]+n], p.data.([]float32)[off:off+n])
		}
		return nil
	})
}
