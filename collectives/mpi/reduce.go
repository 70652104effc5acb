//go:build !nompi

package mpi

// #include "shim.h"
import "C"

import (
	"runtime"
	"sync"
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
	return startIAllReduce(c, c.request(method), buf, c.env.f32, mop)
}

// startIAllReduce starts an in-place MPI_Iallreduce of buf (MPI_Ibarrier
// when it is empty) for r, from c.request, pinning buf until Wait.
func startIAllReduce[T any](c *comm, r *request, buf []T, t C.MPI_Datatype, op C.MPI_Op) (collectives.Request, error) {
	cn, err := cInt(len(buf), "len(buf)")
	if err != nil {
		r.release()
		return nil, c.errorf(r.method, err)
	}
	if len(buf) == 0 {
		r.call = "MPI_Ibarrier"
		err = c.call(r.call, func() C.int { return C.MPI_Ibarrier(c.c, &r.req) })
	} else {
		r.call = "MPI_Iallreduce"
		r.pinner.Pin(&buf[0])
		p := unsafe.Pointer(&buf[0])
		err = c.call(r.call, func() C.int { return C.sg_iallreduce_in_place(p, cn, t, op, c.c, &r.req) })
	}
	if err != nil {
		r.pinner.Unpin()
		r.release()
		return nil, c.errorf(r.method, err)
	}
	return r, nil
}

// request is a pending nonblocking call. A communicator reuses its
// requests (c.request) once waited for, so that a nonblocking call
// allocates nothing in Go: a handle must not be waited for again after
// the communicator's next nonblocking call.
type request struct {
	c      *comm
	method string
	call   string // the MPI call that started it, for messages
	req    C.MPI_Request
	flag   C.int // MPI_Test's answer, here so that polling allocates nothing
	pinner runtime.Pinner
	// IAllReduceBF16's: h is the bfloat16 copy MPI sums (kept, grown, from
	// one use to the next), widened into widen after a successful wait.
	h     []uint16
	widen []float32
	done  bool
	err   error
	// free is set when Wait has returned (or the start failed): the
	// request may be handed out again.
	free bool
}

// requests are a communicator's requests; the lock is for a Wait on
// another goroutine than the calls'.
type requests struct {
	mu  sync.Mutex
	all []*request
}

// request returns a free request of c for method, or a new one.
func (c *comm) request(method string) *request {
	c.reqs.mu.Lock()
	defer c.reqs.mu.Unlock()
	var r *request
	for _, x := range c.reqs.all {
		if x.free {
			r = x
			break
		}
	}
	if r == nil {
		r = &request{c: c}
		c.reqs.all = append(c.reqs.all, r)
	}
	r.method, r.call, r.widen, r.done, r.err, r.free = method, "", nil, false, nil, false
	return r
}

// release makes r free for reuse.
func (r *request) release() {
	r.c.reqs.mu.Lock()
	r.free = true
	r.c.reqs.mu.Unlock()
}

// Wait implements collectives.Request with MPI_Wait (or, when MPI calls
// are serialized, by polling MPI_Test so that other goroutines can make
// MPI calls meanwhile). It unpins the buffer. Waiting again returns the
// first result, until the communicator's next nonblocking call reuses the
// request.
func (r *request) Wait() error {
	if r.done {
		return r.err
	}
	r.done = true
	// Unpin even after a failure: the job is going down, and a Pinner that
	// is collected while pinning panics.
	defer r.release()
	defer r.pinner.Unpin()
	var err error
	if !r.c.env.serialized {
		err = check("MPI_Wait", C.sg_wait(&r.req))
	} else {
		for {
			err = r.c.call("MPI_Test", func() C.int { return C.sg_test(&r.req, &r.flag) })
			if err != nil || r.flag != 0 {
				break
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
	if err != nil {
		r.err = r.c.errorf(r.method+" ("+r.call+")", err)
	} else if r.widen != nil {
		collectives.DecodeBF16(r.widen, r.h)
	}
	r.widen = nil
	return r.err
}
