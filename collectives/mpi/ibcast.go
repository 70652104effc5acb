//go:build !nompi

package mpi

// #include "shim.h"
// static inline int sg_ibcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *r) {
// 	return MPI_Ibcast(sg_rbuf(buf), n, t, root, c, r);
// }
import "C"

import (
	"fmt"
	"unsafe"

	"scalegnn/collectives"
)

// IBcastF32 implements collectives.Comm with MPI_Ibcast (MPI_Ibarrier for
// an empty buf). As IAllReduceF32, buf is pinned until Wait, which must be
// called on every request.
func (c *comm) IBcastF32(buf []float32, root int) (collectives.Request, error) {
	const method = "IBcastF32"
	if root < 0 || root >= c.size {
		return nil, c.errorf(method, fmt.Errorf("root %d out of range [0, %d)", root, c.size))
	}
	cn, err := cInt(len(buf), "len(buf)")
	if err != nil {
		return nil, c.errorf(method, err)
	}
	c.counters.Add(collectives.KindBcast, 4*len(buf))
	r := c.request(method)
	if len(buf) == 0 {
		r.call = "MPI_Ibarrier"
		err = c.call(r.call, func() C.int { return C.MPI_Ibarrier(c.c, &r.req) })
	} else {
		r.call = "MPI_Ibcast"
		r.pinner.Pin(&buf[0])
		p := unsafe.Pointer(&buf[0])
		err = c.call(r.call, func() C.int { return C.sg_ibcast(p, cn, c.env.f32, C.int(root), c.c, &r.req) })
	}
	if err != nil {
		r.pinner.Unpin()
		r.release()
		return nil, c.errorf(method, err)
	}
	return r, nil
}
