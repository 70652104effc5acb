package device

import "scalegnn/collectives"

// Collectives on device buffers. The model calls these with Buffers and
// never sees the memory; they hand it to a collectives.Comm. For the host
// devices (Native, CPU) the buffer is host memory and goes to the
// communicator as it is, without a copy.
//
// The choice: the adapter lives in package device, the one package that
// can reach a Buffer's memory, so "no []float32 of a device buffer is
// reachable from the model" stays compiler-enforced and package
// collectives stays slice-based. A GPU device will add, here, one of two
// paths per call: device pointers to a communicator that accepts them
// (GPU-aware MPI; proposed collectives.DeviceComm, see the package doc of
// device and the report of issue 11), or staging through a pinned host
// buffer the device owns and reuses (Download, collective, Upload).

// AllReduce reduces buf over c in place (collectives.Sum or Max); a group
// of one is skipped.
func AllReduce(dev Device, c collectives.Comm, buf Buffer[float32], op collectives.Op) error {
	dev.hostMemory()
	if c.Size() == 1 {
		return nil
	}
	return c.AllReduceF32(buf.host, op)
}

// AllReduceI64 reduces buf over c in place (the argmax's Min, hit counts).
func AllReduceI64(dev Device, c collectives.Comm, buf Buffer[int64], op collectives.Op) error {
	dev.hostMemory()
	if c.Size() == 1 {
		return nil
	}
	return c.AllReduceI64(buf.host, op)
}

// AllReduceBF16 sums buf over c in bfloat16, in place, as
// collectives.Comm.AllReduceBF16 does.
func AllReduceBF16(dev Device, c collectives.Comm, buf Buffer[float32]) error {
	dev.hostMemory()
	if c.Size() == 1 {
		return nil
	}
	return c.AllReduceBF16(buf.host)
}

// IAllReduce starts a nonblocking AllReduce; buf must not be used by any
// operation until the request's Wait returns.
func IAllReduce(dev Device, c collectives.Comm, buf Buffer[float32], op collectives.Op) (collectives.Request, error) {
	dev.hostMemory()
	if c.Size() == 1 {
		return done{}, nil
	}
	return c.IAllReduceF32(buf.host, op)
}

// IAllReduceBF16 starts a nonblocking AllReduceBF16.
func IAllReduceBF16(dev Device, c collectives.Comm, buf Buffer[float32]) (collectives.Request, error) {
	dev.hostMemory()
	if c.Size() == 1 {
		return done{}, nil
	}
	return c.IAllReduceBF16(buf.host)
}

// done is the request of a collective over a group of one.
type done struct{}

func (done) Wait() error { return nil }
