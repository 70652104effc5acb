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
// (GPU-aware MPI: a proposed DeviceComm taking device pointers and element
// counts), or staging through a pinned host
// buffer the device owns and reuses (Download, collective, Upload).
// The proposed interfaces are declared here, where they are used, and
// picked by type assertion, so communicators can add them one by one.

// AllReduce reduces buf over c in place (collectives.Sum or Max); a group
// of one is skipped.
func AllReduce(dev Device, c collectives.Comm, buf Buffer[float32], op collectives.Op) error {
	if c.Size() == 1 {
		return nil
	}
	if m := dev.memory(); m != nil {
		return m.allReduceF32(c, buf, op)
	}
	return c.AllReduceF32(buf.host, op)
}

// AllReduceI64 reduces buf over c in place (the argmax's Min, hit counts).
func AllReduceI64(dev Device, c collectives.Comm, buf Buffer[int64], op collectives.Op) error {
	if c.Size() == 1 {
		return nil
	}
	if m := dev.memory(); m != nil {
		return m.allReduceI64(c, buf, op)
	}
	return c.AllReduceI64(buf.host, op)
}

// PackedBF16Comm is what AllReduceBF16 asks of a communicator to fuse the
// bfloat16 packing into the device: an in-place sum of values already
// packed (spmm.ToBF16), combined with collectives.AddBF16 exactly
// as Comm.AllReduceBF16 combines them. Proposed for package collectives
// (its MPI binding packs on one goroutine into a staging slice it
// allocates per call); a communicator without it gets the float32 buffer.
type PackedBF16Comm interface {
	AllReduceBF16Packed(buf []uint16) error
	IAllReduceBF16Packed(buf []uint16) (collectives.Request, error)
}

// AllReduceBF16 sums buf over c in bfloat16, in place, with the result of
// collectives.Comm.AllReduceBF16. When c implements PackedBF16Comm the
// device packs buf into staging (len(staging) >= buf.Len(), owned and
// reused by the caller) with its parallel kernel, the communicator moves
// and sums the packed values, and the device unpacks them.
func AllReduceBF16(dev Device, c collectives.Comm, buf Buffer[float32], staging Buffer[uint16]) error {
	if c.Size() == 1 {
		return nil
	}
	if m := dev.memory(); m != nil {
		return m.allReduceBF16(c, buf, staging)
	}
	pc, ok := c.(PackedBF16Comm)
	if !ok {
		return c.AllReduceBF16(buf.host)
	}
	if staging.Len() < buf.Len() {
		shapePanic("AllReduceBF16: staging of %d for %d elements", staging.Len(), buf.Len())
	}
	h := staging.Slice(0, buf.Len())
	dev.PackBF16(h, buf)
	if err := pc.AllReduceBF16Packed(h.host); err != nil {
		return err
	}
	dev.UnpackBF16(buf, h)
	return nil
}

// IAllReduce starts a nonblocking AllReduce; buf must not be used by any
// operation until the request's Wait returns.
func IAllReduce(dev Device, c collectives.Comm, buf Buffer[float32], op collectives.Op) (collectives.Request, error) {
	if c.Size() == 1 {
		return done{}, nil
	}
	if m := dev.memory(); m != nil {
		return m.iAllReduceF32(c, buf, op)
	}
	return c.IAllReduceF32(buf.host, op)
}

// IAllReduceBF16 starts a nonblocking AllReduceBF16 (packed into staging
// when c implements PackedBF16Comm; the request's Wait unpacks). Neither
// buf nor staging may be used until Wait returns.
func IAllReduceBF16(dev Device, c collectives.Comm, buf Buffer[float32], staging Buffer[uint16]) (collectives.Request, error) {
	if c.Size() == 1 {
		return done{}, nil
	}
	if m := dev.memory(); m != nil {
		return m.iAllReduceBF16(c, buf, staging)
	}
	pc, ok := c.(PackedBF16Comm)
	if !ok {
		return c.IAllReduceBF16(buf.host)
	}
	if staging.Len() < buf.Len() {
		shapePanic("IAllReduceBF16: staging of %d for %d elements", staging.Len(), buf.Len())
	}
	h := staging.Slice(0, buf.Len())
	dev.PackBF16(h, buf)
	req, err := pc.IAllReduceBF16Packed(h.host)
	if err != nil {
		return nil, err
	}
	return &unpackOnWait{req: req, dev: dev, buf: buf, h: h}, nil
}

// unpackOnWait completes a packed nonblocking sum: after the transfer,
// the device widens the packed result into the float32 buffer.
type unpackOnWait struct {
	req collectives.Request
	dev Device
	buf Buffer[float32]
	h   Buffer[uint16]
}

func (u *unpackOnWait) Wait() error {
	if err := u.req.Wait(); err != nil {
		return err
	}
	u.dev.UnpackBF16(u.buf, u.h)
	return nil
}

// done is the request of a collective over a group of one.
type done struct{}

func (done) Wait() error { return nil }

// DeviceComm is what a communicator offers to take device memory itself
// (GPU-aware MPI): collectives on device pointers, which the MPI library
// reads and writes directly. DeviceAware says, from the MPI library's own
// answer at run time (MPIX_Query_cuda_support, MPIX_GPU_query_support,
// Cray's MPICH_GPU_SUPPORT_ENABLED), whether it can, and how it was told;
// a device stages through pinned host memory when it cannot. The caller
// has waited for the device's work on ptr before the call.
type DeviceComm interface {
	DeviceAware() (ok bool, how string)
	AllReduceF32Device(ptr uintptr, n int, op collectives.Op) error
	AllReduceI64Device(ptr uintptr, n int, op collectives.Op) error
	IAllReduceF32Device(ptr uintptr, n int, op collectives.Op) (collectives.Request, error)
}

// CollectivePath says how dev moves buffers in a collective over c, for
// the start-up log: host memory as it is, GPU-aware MPI, or staging
// through pinned host memory, with the reason.
func CollectivePath(dev Device, c collectives.Comm) string {
	if dev.memory() == nil {
		return "host memory, no copies"
	}
	if dc, ok := c.(DeviceComm); ok {
		aware, how := dc.DeviceAware()
		if aware {
			return "GPU-aware MPI on device pointers (" + how + ")"
		}
		return "staged through pinned host memory (" + how + ")"
	}
	return "staged through pinned host memory (the communicator does not take device pointers)"
}
