//go:build !nompi

package mpi

// #include "shim.h"
import "C"

import (
	"runtime"
	"time"
	"unsafe"

	"scalegnn/collectives"
)

// AllReduceF32 implements collectives.Comm with an in-place MPI_Allreduce.
func (c *comm) AllReduceF32(buf []float32, op collectives.Op) error {
	return c.allReduce("AllReduceF32", ptr(buf), len(buf), 4, c.env.f32, op)
}

// AllReduceF64 implements collectives.Comm with an in-place MPI_Allreduce.
func (c *comm) AllReduceF64(buf []float64, op collectives.Op) error {
	return c.allReduce("AllReduceF64", ptr(buf), len(buf), 8, c.env.f64, op)
}

// AllReduceI64 implements collectives.Comm with an in-place MPI_Allreduce
// on MPI_INT64_T.
func (c *comm) AllReduceI64(buf []int64, op collectives.Op) error {
	return c.allReduce("AllReduceI64", ptr(buf), len(buf), 8, c.env.i64, op)
}

// allReduce reduces the n elements of type t at p in place. An empty
// all-reduce is a barrier, because Comm promises that an empty collective
// still synchronises and MPI implementations may return at once on a zero
// count.
func (c *comm) allReduce(method string, p unsafe.Pointer, n, elemSize int, t C.MPI_Datatype, op collectives.Op) error {
	mop, err := c.env.op(op)
	if err != nil {
		return c.errorf(method, err)
	}
	cn, err := cInt(n, "len(buf)")
	if err != nil {
		return c.errorf(method, err)
	}
	c.counters.Add(collectives.KindAllReduce, elemSize*n)
	if n == 0 {
		return c.Barrier()
	}
	if err := c.call("MPI_Allreduce", func() C.int { return C.sg_allreduce_in_place(p, cn, t, mop, c.c) }); err != nil {
		return c.errorf(method, err)
	}
	return nil
}

// IAllReduceF32 implements collectives.Comm with an in-place
// MPI_Iallreduce (MPI_Ibarrier for an empty buf).
//
// MPI keeps the address of buf until the operation completes, after the
// call has returned, which cgo allows only for pinned memory: buf's
// backing array is pinned with a runtime.Pinner until Wait, so no copy is
// made. Wait must therefore be called on every request: the Go runtime
// panics when it collects a Pinner that still pins memory.
func (c *comm) IAllReduceF32(buf []float32, op collectives.Op) (collectives.Request, error) {
	const method = "IAllReduceF32"
	mop, err := c.env.op(op)
	if err != nil {
		return nil, c.errorf(method, err)
	}
	c.counters.Add(collectives.KindAllReduce, 4*len(buf))
	return startIAllReduce(c, method, buf, c.env.f32, mop, nil)
}

// startIAllReduce starts an in-place MPI_Iallreduce of buf (MPI_Ibarrier
// when it is empty), pinning buf until Wait, which runs finish (if not nil)
// after a successful completion.
func startIAllReduce[T any](c *comm, method string, buf []T, t C.MPI_Datatype, op C.MPI_Op, finish func()) (collectives.Request, error) {
	cn, err := cInt(len(buf), "len(buf)")
	if err != nil {
		return nil, c.errorf(method, err)
	}
	r := &request{c: c, method: method, finish: finish}
	var req C.MPI_Request
	if len(buf) == 0 {
		r.call = "MPI_Ibarrier"
		err = c.call(r.call, func() C.int { return C.MPI_Ibarrier(c.c, &req) })
	} else {
		r.call = "MPI_Iallreduce"
		r.pinner.Pin(&buf[0])
		p := unsafe.Pointer(&buf[0])
		err = c.call(r.call, func() C.int { return C.sg_iallreduce_in_place(p, cn, t, op, c.c, &req) })
	}
	if err != nil {
		r.pinner.Unpin()
		return nil, c.errorf(method, err)
	}
	r.req = req
	return r, nil
}

// request is a pending IAllReduceF32 or IAllReduceBF16.
type request struct {
	c      *comm
	method string
	call   string // the MPI call that started it, for messages
	finish func() // run after a successful wait (nil: nothing to do)
	req    C.MPI_Request
	pinner runtime.Pinner
	done   bool
	err    error
}

// Wait implements collectives.Request with MPI_Wait (or, when MPI calls
// are serialized, by polling MPI_Test so that other goroutines can make
// MPI calls meanwhile). It unpins the buffer. Waiting again returns the
// first result.
func (r *request) Wait() error {
	if r.done {
		return r.err
	}
	r.done = true
	// Unpin even after a failure: the job is going down, and a Pinner that
	// is collected while pinning panics.
	defer r.pinner.Unpin()
	req := r.req
	var err error
	if !r.c.env.serialized {
		err = check("MPI_Wait", C.sg_wait(&req))
	} else {
		for {
			var flag C.int
			err = r.c.call("MPI_Test", func() C.int { return C.sg_test(&req, &flag) })
			if err != nil || flag != 0 {
				break
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
	r.req = req
	if err != nil {
		r.err = r.c.errorf(r.method+" ("+r.call+")", err)
	} else if r.finish != nil {
		r.finish()
	}
	return r.err
}
