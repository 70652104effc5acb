package collectives

// The blocking data collectives of Local. Each rank deposits its input
// slice itself; after the round completes, each rank computes its output
// from the deposits into its scratch, waits until every rank has read its
// input (which the caller may change once the call returns), and copies
// the output to the caller's buffer. Outputs and inputs may thus overlap.

// AllReduceF32 implements Comm.
func (c *localComm) AllReduceF32(buf []float32, op Op) error {
	return localAllReduce(c, "AllReduceF32", buf, op, 4, f32Of, &c.f32, deposit{f32: buf})
}

// AllReduceF64 implements Comm.
func (c *localComm) AllReduceF64(buf []float64, op Op) error {
	return localAllReduce(c, "AllReduceF64", buf, op, 8, f64Of, &c.f64, deposit{f64: buf})
}

// AllReduceI64 implements Comm.
func (c *localComm) AllReduceI64(buf []int64, op Op) error {
	return localAllReduce(c, "AllReduceI64", buf, op, 8, i64Of, &c.i64, deposit{i64: buf})
}

// localAllReduce reduces buf in rank order into scratch and copies the
// result back; pick reads an input from a deposit, and d holds buf in
// pick's field. (d is passed in rather than set through a function here,
// whose closure over buf would be allocated per call.)
func localAllReduce[T number](c *localComm, name string, buf []T, op Op, elemSize int,
	pick func(*deposit) []T, scratch *[]T, d deposit) error {
	if err := checkOp(op); err != nil {
		return c.errorf(name, "%v", err)
	}
	c.counters.Add(KindAllReduce, elemSize*len(buf))
	out := grow(scratch, len(buf))
	d.name, d.op = name, op
	err := c.exchange(d, true, func(r *round) error {
		if err := reduceParts(out, r.parts, pick, op); err != nil {
			return c.errorf(name, "%v", err)
		}
		return nil
	})
	if err == nil {
		copy(buf, out)
	}
	return err
}

// AllReduceBF16 implements Comm: the ranks' values, each rounded to
// bfloat16, are summed in rank order with AddBF16.
func (c *localComm) AllReduceBF16(buf []float32) error {
	const name = "AllReduceBF16"
	c.counters.Add(KindAllReduce, 2*len(buf))
	out := grow(&c.f32, len(buf))
	err := c.exchange(deposit{name: name, op: Sum, f32: buf}, true, func(r *round) error {
		for i := range r.parts {
			if d := r.parts[i].f32; len(d) != len(buf) {
				return c.errorf(name, "rank %d passed %d elements, this rank %d", i, len(d), len(buf))
			}
		}
		for k := range out {
			acc := ToBF16(r.parts[0].f32[k])
			for i := 1; i < len(r.parts); i++ {
				acc = AddBF16(acc, ToBF16(r.parts[i].f32[k]))
			}
			out[k] = FromBF16(acc)
		}
		return nil
	})
	if err == nil {
		copy(buf, out)
	}
	return err
}

// AllGatherF32 implements Comm.
func (c *localComm) AllGatherF32(dst, src []float32) error {
	const name = "AllGatherF32"
	if len(dst) != c.Size()*len(src) {
		return c.errorf(name, "len(dst) = %d, want Size()*len(src) = %d*%d", len(dst), c.Size(), len(src))
	}
	c.counters.Add(KindAllGather, 4*len(src))
	out := grow(&c.f32, len(dst))
	err := c.exchange(deposit{name: name, f32: src}, true, func(r *round) error {
		for i := range r.parts {
			d := r.parts[i].f32
			if len(d) != len(src) {
				return c.errorf(name, "rank %d passed len(src) = %d, this rank %d", i, len(d), len(src))
			}
			copy(out[i*len(src):], d)
		}
		return nil
	})
	if err == nil {
		copy(dst, out)
	}
	return err
}

// AllGatherVF32 implements Comm.
func (c *localComm) AllGatherVF32(dst, src []float32, counts []int) error {
	const name = "AllGatherVF32"
	if len(counts) != c.Size() {
		return c.errorf(name, "len(counts) = %d, want Size() = %d", len(counts), c.Size())
	}
	displs, total, err := displacements(&c.ints, counts)
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
	out := grow(&c.f32, total)
	err = c.exchange(deposit{name: name, f32: src}, true, func(r *round) error {
		for i := range r.parts {
			d := r.parts[i].f32
			if len(d) != counts[i] {
				return c.errorf(name, "rank %d passed len(src) = %d, but counts[%d] = %d", i, len(d), i, counts[i])
			}
			copy(out[displs[i]:], d)
		}
		return nil
	})
	if err == nil {
		copy(dst, out)
	}
	return err
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
	out := grow(&c.f32, n)
	err := c.exchange(deposit{name: name, f32: src}, true, func(r *round) error {
		for i := range r.parts {
			if d := r.parts[i].f32; len(d) != len(src) {
				return c.errorf(name, "rank %d passed len(src) = %d, this rank %d", i, len(d), len(src))
			}
		}
		lo, hi := c.rank*n, (c.rank+1)*n
		copy(out, r.parts[0].f32[lo:hi])
		for i := 1; i < len(r.parts); i++ {
			combine(out, r.parts[i].f32[lo:hi], Sum)
		}
		return nil
	})
	if err == nil {
		copy(dst, out)
	}
	return err
}

// BcastF32 implements Comm.
func (c *localComm) BcastF32(buf []float32, root int) error {
	return localBcast(c, "BcastF32", buf, root, 4, f32Of, deposit{f32: buf})
}

// BcastBytes implements Comm.
func (c *localComm) BcastBytes(buf []byte, root int) error {
	d := deposit{}
	if c.rank == root {
		d.b = buf
	}
	return localBcast(c, "BcastBytes", buf, root, 1, bytesOf, d)
}

// localBcast copies root's buf into the others'. Only root's buf is read
// by peers (d holds it in pick's field on root), so only root waits for
// them, and the others, whose buf nobody reads, write it directly.
func localBcast[T float32 | byte](c *localComm, name string, buf []T, root, elemSize int,
	pick func(*deposit) []T, d deposit) error {
	if root < 0 || root >= c.Size() {
		return c.errorf(name, "root %d out of range [0, %d)", root, c.Size())
	}
	c.counters.Add(KindBcast, elemSize*len(buf))
	d.name, d.root, d.n = name, root, len(buf)
	return c.exchange(d, c.rank == root, func(r *round) error {
		if n := r.parts[root].n; n != len(buf) {
			return c.errorf(name, "root %d passed len(buf) = %d, this rank %d", root, n, len(buf))
		}
		if c.rank != root {
			copy(buf, pick(&r.parts[root]))
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
	_, sendTotal, err := displacements(&c.ints, sendCounts)
	if err != nil {
		return c.errorf(name, "sendCounts: %v", err)
	}
	rdispls, recvTotal, err := displacements(&c.ints, recvCounts)
	if err != nil {
		return c.errorf(name, "recvCounts: %v", err)
	}
	if len(send) < sendTotal || len(recv) < recvTotal {
		return c.errorf(name, "len(send) = %d, len(recv) = %d, want at least the sums of the counts %d, %d",
			len(send), len(recv), sendTotal, recvTotal)
	}
	c.counters.Add(KindAlltoallv, 4*sendTotal)
	out := grow(&c.f32, recvTotal)
	d := deposit{name: name, f32: send[:sendTotal], counts: sendCounts}
	err = c.exchange(d, true, func(r *round) error {
		for j := range r.parts {
			p := &r.parts[j]
			// Rank j's block for this rank starts after its blocks for
			// ranks 0 .. rank-1.
			off := 0
			for _, n := range p.counts[:c.rank] {
				off += n
			}
			n := p.counts[c.rank]
			if n != recvCounts[j] {
				return c.errorf(name, "rank %d sends %d elements to rank %d, but recvCounts[%d] = %d",
					j, n, c.rank, j, recvCounts[j])
			}
			copy(out[rdispls[j]:rdispls[j]+n], p.f32[off:off+n])
		}
		return nil
	})
	if err == nil {
		copy(recv, out)
	}
	return err
}
