//go:build cgo

package device

import (
	"fmt"
	"sync"
	"unsafe"

	"scalegnn/collectives"
	"scalegnn/device/internal/cuda"
	"scalegnn/grid"
)

// The CUDA device's collectives. With a GPU-aware communicator
// (DeviceComm whose DeviceAware says yes) the device pointer goes to MPI
// after the stream is drained. Otherwise the buffer is staged through
// pinned host memory: copied down, reduced by the host communicator,
// copied back up. Large float32 sums are cut into chunks so that copying
// chunk k+1 down overlaps the transfer of chunk k (one nonblocking
// all-reduce in flight), and each chunk goes back up as soon as it is
// summed. The bfloat16 sum packs on the GPU first, so half the bytes
// cross the bus.

// stageChunk is the size of the pipelined chunks: large enough to keep
// MPI's per-call cost small, small enough that the pipeline fills.
const stageChunk = 4 << 20

// awareComm returns c as a DeviceComm when its MPI is GPU-aware.
func awareComm(c collectives.Comm) (DeviceComm, bool) {
	dc, ok := c.(DeviceComm)
	if !ok {
		return nil, false
	}
	aware, _ := dc.DeviceAware()
	return dc, aware
}

// stagingPool hands out pinned host buffers, reused: a blocking
// collective returns its buffer at once, a nonblocking one at Wait.
type stagingPool struct {
	ctx  *cuda.Ctx
	mu   sync.Mutex
	free []pinned
}

type pinned struct {
	p     unsafe.Pointer
	bytes int64
}

func (s *stagingPool) take(bytes int64) pinned {
	s.mu.Lock()
	defer s.mu.Unlock()
	best := -1
	for i, b := range s.free {
		if b.bytes >= bytes && (best < 0 || b.bytes < s.free[best].bytes) {
			best = i
		}
	}
	if best >= 0 {
		b := s.free[best]
		s.free = append(s.free[:best], s.free[best+1:]...)
		return b
	}
	size := int64(1 << 20)
	for size < bytes {
		size *= 2
	}
	p, err := s.ctx.AllocHost(size)
	if err != nil {
		panic(&CUDAError{Op: "cuMemAllocHost", Err: err})
	}
	return pinned{p: p, bytes: size}
}

func (s *stagingPool) put(b pinned) {
	s.mu.Lock()
	s.free = append(s.free, b)
	s.mu.Unlock()
}

func pinnedSlice[T Elem](b pinned, n int) []T { return unsafe.Slice((*T)(b.p), n) }

func (d *CUDA) down(dst unsafe.Pointer, src uintptr, bytes int64) {
	if err := d.ctx.D2H(dst, src, bytes); err != nil {
		d.fail("staging copy", err)
	}
}

// up queues a copy from pinned memory; the next down on the stream
// finishes after it, so the buffer may be reused once it is returned.
func (d *CUDA) up(dst uintptr, src unsafe.Pointer, bytes int64) {
	if err := d.ctx.H2D(dst, src, bytes, false); err != nil {
		d.fail("staging copy", err)
	}
}

func (d *CUDA) allReduceF32(c collectives.Comm, buf Buffer[float32], op collectives.Op) error {
	n := buf.Len()
	if n == 0 {
		return nil
	}
	if dc, ok := awareComm(c); ok {
		d.Sync()
		return dc.AllReduceF32Device(buf.addr(0), n, op)
	}
	st := d.stage.take(int64(n) * 4)
	defer d.stage.put(st)
	h := pinnedSlice[float32](st, n)
	const chunk = stageChunk / 4
	if n <= chunk {
		d.down(st.p, buf.addr(0), int64(n)*4)
		if err := c.AllReduceF32(h, op); err != nil {
			return err
		}
		d.up(buf.addr(0), st.p, int64(n)*4)
		return nil
	}
	// Pipelined: chunk k is reduced while chunk k+1 comes down.
	d.down(st.p, buf.addr(0), chunk*4)
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		req, err := c.IAllReduceF32(h[lo:hi], op)
		if err != nil {
			return err
		}
		if hi < n {
			nhi := min(hi+chunk, n)
			d.down(unsafe.Pointer(&h[hi]), buf.addr(hi), int64(nhi-hi)*4)
		}
		if err := req.Wait(); err != nil {
			return err
		}
		d.up(buf.addr(lo), unsafe.Pointer(&h[lo]), int64(hi-lo)*4)
	}
	return nil
}

func (d *CUDA) allReduceI64(c collectives.Comm, buf Buffer[int64], op collectives.Op) error {
	n := buf.Len()
	if n == 0 {
		return nil
	}
	if dc, ok := awareComm(c); ok {
		d.Sync()
		return dc.AllReduceI64Device(buf.addr(0), n, op)
	}
	st := d.stage.take(int64(n) * 8)
	defer d.stage.put(st)
	d.down(st.p, buf.addr(0), int64(n)*8)
	if err := c.AllReduceI64(pinnedSlice[int64](st, n), op); err != nil {
		return err
	}
	d.up(buf.addr(0), st.p, int64(n)*8)
	return nil
}

// allReduceBF16 packs on the GPU when the communicator sums packed
// values, else stages the float32 buffer for Comm.AllReduceBF16.
func (d *CUDA) allReduceBF16(c collectives.Comm, buf Buffer[float32], staging Buffer[uint16]) error {
	req, err := d.iAllReduceBF16(c, buf, staging)
	if err != nil {
		return err
	}
	return req.Wait()
}

func (d *CUDA) iAllReduceF32(c collectives.Comm, buf Buffer[float32], op collectives.Op) (collectives.Request, error) {
	n := buf.Len()
	if n == 0 {
		return done{}, nil
	}
	if dc, ok := awareComm(c); ok {
		d.Sync()
		return dc.IAllReduceF32Device(buf.addr(0), n, op)
	}
	st := d.stage.take(int64(n) * 4)
	d.down(st.p, buf.addr(0), int64(n)*4)
	req, err := c.IAllReduceF32(pinnedSlice[float32](st, n), op)
	if err != nil {
		d.stage.put(st)
		return nil, err
	}
	return &stagedRequest{req: req, wait: func() {
		d.up(buf.addr(0), st.p, int64(n)*4)
		d.stage.put(st)
	}}, nil
}

func (d *CUDA) iAllReduceBF16(c collectives.Comm, buf Buffer[float32], staging Buffer[uint16]) (collectives.Request, error) {
	n := buf.Len()
	if n == 0 {
		return done{}, nil
	}
	pc, packed := c.(PackedBF16Comm)
	if !packed {
		st := d.stage.take(int64(n) * 4)
		d.down(st.p, buf.addr(0), int64(n)*4)
		req, err := c.IAllReduceBF16(pinnedSlice[float32](st, n))
		if err != nil {
			d.stage.put(st)
			return nil, err
		}
		return &stagedRequest{req: req, wait: func() {
			d.up(buf.addr(0), st.p, int64(n)*4)
			d.stage.put(st)
		}}, nil
	}
	if staging.Len() < n {
		shapePanic("IAllReduceBF16: staging of %d for %d elements", staging.Len(), n)
	}
	hs := staging.Slice(0, n)
	d.PackBF16(hs, buf)
	st := d.stage.take(int64(n) * 2)
	d.down(st.p, hs.addr(0), int64(n)*2)
	req, err := pc.IAllReduceBF16Packed(pinnedSlice[uint16](st, n))
	if err != nil {
		d.stage.put(st)
		return nil, err
	}
	return &stagedRequest{req: req, wait: func() {
		d.up(hs.addr(0), st.p, int64(n)*2)
		d.UnpackBF16(buf, hs)
		d.stage.put(st)
	}}, nil
}

// stagedRequest finishes a staged nonblocking collective: the copy back
// to the GPU once the host transfer is done.
type stagedRequest struct {
	req  collectives.Request
	wait func()
}

func (r *stagedRequest) Wait() error {
	if err := r.req.Wait(); err != nil {
		return err
	}
	r.wait()
	return nil
}

// redistribute stages both matrices through pinned host memory for
// grid.Redistribute. No lock is held across it: it is a collective, and
// ranks in one process may share this device.
func (d *CUDA) redistribute(g *grid.Grid, dst Buffer[float32], dstL grid.Layout, src Buffer[float32], srcL grid.Layout, rowMap []int32) error {
	ss := d.stage.take(int64(src.Len()) * 4)
	defer d.stage.put(ss)
	sd := d.stage.take(int64(dst.Len()) * 4)
	defer d.stage.put(sd)
	hs, hd := pinnedSlice[float32](ss, src.Len()), pinnedSlice[float32](sd, dst.Len())
	if len(hs) > 0 {
		d.down(ss.p, src.addr(0), int64(len(hs))*4)
	}
	if err := g.Redistribute(hd, dstL, hs, srcL, rowMap); err != nil {
		return fmt.Errorf("redistribute: %w", err)
	}
	if len(hd) > 0 {
		d.up(dst.addr(0), sd.p, int64(len(hd))*4)
	}
	return nil
}
