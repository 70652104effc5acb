//go:build !nompi

package mpi

// #include "shim.h"
import "C"

import (
	"fmt"
	"os"

	"scalegnn/collectives"
)

// comm is a collectives.Comm on an MPI communicator. Communicators made by
// Split are never freed (Comm has no Free); MPI_Finalize releases them.
type comm struct {
	env        *env
	c          C.MPI_Comm
	rank, size int
	counters   collectives.Counters
	reqs       requests // the nonblocking requests, reused
	// scratch is what the blocking calls reuse instead of allocating per
	// call: the C count and displacement arrays of the v-collectives and
	// the bfloat16 copy of AllReduceBF16. A Comm's collectives are called
	// in one order by one goroutine per rank (collectives.Comm), so one
	// set per communicator is enough.
	scratch struct {
		counts [4][]C.int
		bf16   []uint16
	}
}

var _ collectives.Comm = (*comm)(nil)

// newComm wraps c, setting MPI_ERRORS_RETURN on it. (A communicator made
// by MPI_Comm_split inherits its parent's error handler; setting it again
// makes that independent of the library.)
func newComm(e *env, c C.MPI_Comm) (*comm, error) {
	unlock := e.lock()
	defer unlock()
	if err := check("MPI_Comm_set_errhandler", C.MPI_Comm_set_errhandler(c, C.sg_errors_return())); err != nil {
		return nil, err
	}
	var rank, size C.int
	if err := check("MPI_Comm_rank", C.MPI_Comm_rank(c, &rank)); err != nil {
		return nil, err
	}
	if err := check("MPI_Comm_size", C.MPI_Comm_size(c, &size)); err != nil {
		return nil, err
	}
	return &comm{env: e, c: c, rank: int(rank), size: int(size)}, nil
}

// errorf returns an error that names the method and this rank.
func (c *comm) errorf(method string, err error) error {
	return fmt.Errorf("mpi: %s on rank %d of %d: %w", method, c.rank, c.size, err)
}

// call makes one MPI call, under the lock when MPI calls are serialized,
// and checks its return code.
func (c *comm) call(name string, f func() C.int) error {
	unlock := c.env.lock()
	code := f()
	unlock()
	return check(name, code)
}

// Rank implements collectives.Comm.
func (c *comm) Rank() int { return c.rank }

// Size implements collectives.Comm.
func (c *comm) Size() int { return c.size }

// Counters implements collectives.Comm.
func (c *comm) Counters() *collectives.Counters { return &c.counters }

// Split implements collectives.Comm with MPI_Comm_split. A negative color
// is passed as MPI_UNDEFINED, and the rank gets a nil Comm.
func (c *comm) Split(color, key int) (collectives.Comm, error) {
	ccolor := C.sg_undefined()
	if color >= 0 {
		var err error
		if ccolor, err = cSigned(color, "color"); err != nil {
			return nil, c.errorf("Split", err)
		}
	}
	ckey, err := cSigned(key, "key")
	if err != nil {
		return nil, c.errorf("Split", err)
	}
	var nc C.MPI_Comm
	if err := c.call("MPI_Comm_split", func() C.int { return C.MPI_Comm_split(c.c, ccolor, ckey, &nc) }); err != nil {
		return nil, c.errorf("Split", err)
	}
	if nc == C.sg_comm_null() {
		return nil, nil
	}
	sub, err := newComm(c.env, nc)
	if err != nil {
		return nil, c.errorf("Split", err)
	}
	return sub, nil
}

// Barrier implements collectives.Comm.
func (c *comm) Barrier() error {
	if err := c.call("MPI_Barrier", func() C.int { return C.MPI_Barrier(c.c) }); err != nil {
		return c.errorf("Barrier", err)
	}
	return nil
}

// Abort implements collectives.Comm with MPI_Abort on MPI_COMM_WORLD (not
// on c: the whole job ends). It does not take the serialization lock, which
// a blocked collective may hold. Should MPI_Abort return, the process
// exits with code.
//
// A singleton (one rank started without a launcher) has no peer to stop,
// and Open MPI's MPI_Abort would only add its banner after the error that
// the caller printed; it exits with code instead.
func (c *comm) Abort(code int) {
	if c.env.singleton {
		os.Exit(code)
	}
	C.MPI_Abort(c.env.world, C.int(code))
	os.Exit(code)
}
