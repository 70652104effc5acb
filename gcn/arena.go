package gcn

import "scalegnn/device"

// arena hands out the device memory of one pass (activations, gradients,
// masks, all-reduce partials and staging) from buffers allocated once and
// reused every step: reset at the start of a pass rewinds it. Before its
// first pass the model sizes it from the arena plan (reserve: what the
// passes it will run take, with the growth rule's quarter), so that the
// first pass takes nothing beyond it. A pass that still needs more than
// the arena holds (a larger mini-batch) gets fresh buffers for the rest of
// it, and the next reset replaces the arena by one with room for
// everything that pass took plus a quarter, so that a steady state
// allocates nothing. A model keeps one arena for the full graph and one
// for its mini-batches (sized by the largest seen).
//
// On a host device a replaced pool and a pass's overflow are Go garbage
// until the collector runs, and the address space the heap grew to for
// them stays mapped: without the reservation a first pass that grew the
// arena from nothing left its whole need as garbage beside the arena
// (Cora with hidden 20,000 on 4x1x1: 345 MB), which the memory check's
// prediction (the arena alone) did not count.
//
// Memory from the arena is not cleared: every operation the model runs
// overwrites its destination.
type arena struct {
	dev device.Device
	f32 pool[float32]
	u64 pool[uint64]
	u16 pool[uint16]
	i64 pool[int64]
}

func newArena(dev device.Device) *arena { return &arena{dev: dev} }

// reserve grows each pool to hold at least u's elements before a pass, so
// that passes planned within u take nothing beyond the arena. It is for an
// arena between passes (nothing handed out).
func (a *arena) reserve(u ArenaUse) {
	a.f32.reserve(a.dev, u.F32)
	a.u64.reserve(a.dev, u.U64)
	a.u16.reserve(a.dev, u.U16)
	a.i64.reserve(a.dev, u.I64)
}

// reset rewinds the arena for a new pass, growing it if the last pass
// overflowed.
func (a *arena) reset() {
	a.f32.reset(a.dev)
	a.u64.reset(a.dev)
	a.u16.reset(a.dev)
	a.i64.reset(a.dev)
}

// mat returns a rows×cols matrix.
func (a *arena) mat(rows, cols int) device.Mat {
	return device.Matrix(a.f32.take(a.dev, rows*cols), rows, cols)
}

// vec returns a float32 buffer of n elements.
func (a *arena) vec(n int) device.Buffer[float32] { return a.f32.take(a.dev, n) }

// matBF16 takes a rows×cols bfloat16 matrix (mixed precision's operands).
func (a *arena) matBF16(rows, cols int) device.MatBF16 {
	return device.MatrixBF16(a.u16.take(a.dev, rows*cols), rows, cols)
}

// pool is an arena's memory of one element type.
type pool[T device.Elem] struct {
	buf      device.Buffer[T]
	off      int // elements handed out from buf this pass
	overflow int // elements handed out beyond buf this pass
	extra    []device.Buffer[T]
	high     int // the most elements a pass has taken
}

func (p *pool[T]) take(dev device.Device, n int) device.Buffer[T] {
	p.high = max(p.high, p.off+p.overflow+n)
	if p.off+n <= p.buf.Len() {
		b := p.buf.Slice(p.off, p.off+n)
		p.off += n
		return b
	}
	p.overflow += n
	b := device.Alloc[T](dev, n)
	p.extra = append(p.extra, b)
	return b
}

func (p *pool[T]) reserve(dev device.Device, n int64) {
	if p.off != 0 || p.overflow != 0 {
		panic("gcn: arena reserved during a pass")
	}
	if int64(p.buf.Len()) >= n {
		return
	}
	device.Free(dev, p.buf)
	p.buf = device.Buffer[T]{}
	p.buf = device.Alloc[T](dev, int(n))
}

func (p *pool[T]) reset(dev device.Device) {
	if p.overflow > 0 {
		// The last pass's memory is dead once the arena rewinds: free it
		// before taking the larger buffer, so that a GPU never holds both
		// (its garbage is not collected on the GPU's schedule).
		need := p.off + p.overflow
		device.Free(dev, p.buf)
		for i, b := range p.extra {
			device.Free(dev, b)
			p.extra[i] = device.Buffer[T]{}
		}
		p.extra = p.extra[:0]
		p.buf = device.Alloc[T](dev, need+need/4)
	}
	p.off, p.overflow = 0, 0
}

// high returns the most elements of each pool one pass has taken: the
// arena plan must count exactly that (TestArenaPlanMatchesArenas), not
// only enough.
func (a *arena) high() ArenaUse {
	return ArenaUse{int64(a.f32.high), int64(a.u64.high), int64(a.u16.high), int64(a.i64.high)}
}

// capacity returns the elements of each pool as the next reset leaves them.
func (a *arena) capacity() ArenaUse {
	return ArenaUse{a.f32.capacity(), a.u64.capacity(), a.u16.capacity(), a.i64.capacity()}
}

func (p *pool[T]) capacity() int64 {
	if p.overflow > 0 {
		need := p.off + p.overflow
		return int64(need + need/4)
	}
	return int64(p.buf.Len())
}

// release frees every pool, and rewinds it; the next reserve allocates
// them again. It is for an arena between passes: what the last pass took
// is dead.
func (a *arena) release() {
	a.f32.release(a.dev)
	a.u64.release(a.dev)
	a.u16.release(a.dev)
	a.i64.release(a.dev)
}

func (p *pool[T]) release(dev device.Device) {
	device.Free(dev, p.buf)
	p.buf = device.Buffer[T]{}
	for i, b := range p.extra {
		device.Free(dev, b)
		p.extra[i] = device.Buffer[T]{}
	}
	p.extra = p.extra[:0]
	p.off, p.overflow = 0, 0
}

// ReleaseArenas frees the memory of the model's passes (its arenas: the
// activations, gradients and masks of a step or an evaluation), for a
// caller about to run something large between steps: isolated training's
// layer-wise evaluation out of core, which would otherwise hold them
// beside its own layers (at R-MAT scale 25 with 32 partitions, 3.4 GB of
// a 13 GB peak). The next pass sizes and allocates them again, once; the
// parameters, gradients and optimizer state are kept, so training goes on
// bit for bit.
func (m *Model) ReleaseArenas() {
	for _, b := range []*bound{&m.full, &m.batch} {
		b.ar.release()
		b.reserved = false
	}
	// The tape's views are into the arenas: while it holds them, the
	// collector cannot take the memory back. Its slice keeps its storage.
	tp := &m.tp
	for i := range tp.layers {
		tp.layers[i] = layerTape{}
	}
	tp.projIn, tp.headIn, tp.logits, tp.headKeep = device.Mat{}, device.Mat{}, device.Mat{}, mask{}
}
