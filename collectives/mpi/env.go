package mpi

// #include "shim.h"
import "C"

import (
	"fmt"
	"sync"

	"scalegnn/collectives"
)

// env is what every communicator of the job shares: the handles of the MPI
// constants, looked up once, and the lock that serializes MPI calls when
// the library does not provide MPI_THREAD_MULTIPLE.
type env struct {
	world C.MPI_Comm

	f32, f64, i64, bytes C.MPI_Datatype
	sum, max, min        C.MPI_Op

	// serialized is set when MPI provides MPI_THREAD_SERIALIZED only; every
	// MPI call then holds mu.
	serialized bool
	mu         sync.Mutex
}

func newEnv(serialized bool) *env {
	return &env{
		world:      C.sg_comm_world(),
		f32:        C.sg_float(),
		f64:        C.sg_double(),
		i64:        C.sg_int64(),
		bytes:      C.sg_byte(),
		sum:        C.sg_sum(),
		max:        C.sg_max(),
		min:        C.sg_min(),
		serialized: serialized,
	}
}

// lock takes the MPI lock if calls must be serialized; the returned
// function releases it.
func (e *env) lock() (unlock func()) {
	if !e.serialized {
		return func() {}
	}
	e.mu.Lock()
	return e.mu.Unlock
}

// op returns the MPI handle of a reduction operator.
func (e *env) op(op collectives.Op) (C.MPI_Op, error) {
	switch op {
	case collectives.Sum:
		return e.sum, nil
	case collectives.Max:
		return e.max, nil
	case collectives.Min:
		return e.min, nil
	}
	return e.sum, fmt.Errorf("unknown reduction operator %v", op)
}
