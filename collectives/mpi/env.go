//go:build !nompi

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

	f32, f64, i64, bytes, u16 C.MPI_Datatype
	sum, max, min             C.MPI_Op
	// bf16Sum is the user-defined bfloat16 sum on MPI_UINT16_T, created
	// once by Init (MPI_Finalize frees it).
	bf16Sum C.MPI_Op

	// serialized is set when MPI provides MPI_THREAD_SERIALIZED only; every
	// MPI call then holds mu.
	serialized bool
	mu         sync.Mutex
	// unlock is mu.Unlock as a func value made once: a method value made
	// per lock would be an allocation per MPI call (and per poll of a
	// serialized Wait).
	unlock func()

	// singleton is set for a world of one rank that no launcher started
	// (see Abort).
	singleton bool
}

// newEnv looks up the constants and creates the bfloat16 sum; MPI must be
// initialized.
func newEnv(serialized bool) (*env, error) {
	e := &env{
		world:      C.sg_comm_world(),
		f32:        C.sg_float(),
		f64:        C.sg_double(),
		i64:        C.sg_int64(),
		bytes:      C.sg_byte(),
		u16:        C.sg_uint16(),
		sum:        C.sg_sum(),
		max:        C.sg_max(),
		min:        C.sg_min(),
		serialized: serialized,
	}
	var op C.MPI_Op
	if err := check("MPI_Op_create", C.sg_bf16_sum_op(&op)); err != nil {
		return nil, fmt.Errorf("creating the bfloat16 sum: %w", err)
	}
	e.bf16Sum = op
	e.unlock = e.mu.Unlock
	return e, nil
}

// lock takes the MPI lock if calls must be serialized; the returned
// function releases it.
func (e *env) lock() (unlock func()) {
	if !e.serialized {
		return func() {}
	}
	e.mu.Lock()
	return e.unlock
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
