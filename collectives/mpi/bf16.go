//go:build !nompi

package mpi

// #include "shim.h"
import "C"

import (
	"unsafe"

	"scalegnn/collectives"
)

// AllReduceBF16 implements collectives.Comm: buf is rounded into a
// bfloat16 buffer, summed in place with the user-defined bfloat16 sum on
// MPI_UINT16_T, and widened back.
func (c *comm) AllReduceBF16(buf []float32) error {
	const method = "AllReduceBF16"
	cn, err := cInt(len(buf), "len(buf)")
	if err != nil {
		return c.errorf(method, err)
	}
	c.counters.Add(collectives.KindAllReduce, 2*len(buf))
	if len(buf) == 0 {
		return c.Barrier()
	}
	if cap(c.scratch.bf16) < len(buf) {
		c.scratch.bf16 = make([]uint16, len(buf))
	}
	h := c.scratch.bf16[:len(buf)]
	collectives.EncodeBF16(h, buf)
	p := unsafe.Pointer(&h[0])
	if err := c.call("MPI_Allreduce", func() C.int { return C.sg_allreduce_in_place(p, cn, c.env.u16, c.env.bf16Sum, c.c) }); err != nil {
		return c.errorf(method, err)
	}
	collectives.DecodeBF16(buf, h)
	return nil
}

// IAllReduceBF16 implements collectives.Comm. The bfloat16 copy MPI works
// on is pinned until Wait, which widens it back into buf.
func (c *comm) IAllReduceBF16(buf []float32) (collectives.Request, error) {
	c.counters.Add(collectives.KindAllReduce, 2*len(buf))
	r := c.request("IAllReduceBF16")
	if cap(r.h) < len(buf) {
		r.h = make([]uint16, len(buf))
	}
	r.h = r.h[:len(buf)]
	collectives.EncodeBF16(r.h, buf)
	r.widen = buf
	return startIAllReduce(c, r, r.h, c.env.u16, c.env.bf16Sum)
}
