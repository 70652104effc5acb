package device

import (
	"fmt"
	"unsafe"

	"scalegnn/internal/hugepage"
)

// Elem is an element type a Buffer may hold: float32 activations and
// weights, int32 indices and labels, int64 argmax classes, uint64 dropout
// bit masks, uint16 bfloat16 staging and uint8 split masks.
type Elem interface {
	~float32 | ~int32 | ~int64 | ~uint64 | ~uint16 | ~uint8
}

// Buffer is device memory holding Len elements of type T. Its storage is
// unexported: code outside package device cannot read or write it except
// through Upload, Download and the Device's operations, so the compiler
// keeps model code from touching device memory directly. The zero Buffer
// is empty. A Buffer is a handle: copies share the memory.
type Buffer[T Elem] struct {
	host []T // host-resident storage (Native and CPU devices)

	// Device memory (the CUDA device): elements [off, off+n) of blk.
	// shadow, when set, is the host slice a Share copied (the same
	// elements), kept only so that index checks need not read the device.
	blk    *gpuBlock
	off, n int
	shadow []T
}

// Len returns the number of elements.
func (b Buffer[T]) Len() int {
	if b.blk != nil {
		return b.n
	}
	return len(b.host)
}

// elemSize is the size of one T in bytes.
func elemSize[T Elem]() int64 {
	var z T
	return int64(unsafe.Sizeof(z))
}

// addr is the device address of element i of a device buffer.
func (b Buffer[T]) addr(i int) uintptr {
	return b.blk.ptr + uintptr(int64(b.off+i)*elemSize[T]())
}

// checkable returns the host elements an index check may read: the
// buffer itself on a host device, a Share's source on a GPU, nil when
// only the device holds them (not checked).
func (b Buffer[T]) checkable() []T {
	if b.blk != nil {
		return b.shadow
	}
	return b.host
}

// Alloc returns a zeroed buffer of n elements on dev. A negative n panics,
// and so does a GPU out of memory, with an *OutOfMemoryError. A host
// device's buffer of 8 MiB or more asks for huge pages (hugepage.Make).
func Alloc[T Elem](dev Device, n int) Buffer[T] {
	if n < 0 {
		shapePanic("Alloc(%d)", n)
	}
	if g := dev.memory(); g != nil {
		return Buffer[T]{blk: g.alloc(int64(n) * elemSize[T]()), n: n}
	}
	// Huge pages: an SpMM gathers rows of its dense operand at random, and
	// with 4 KiB pages nearly every gather is a TLB miss (internal/hugepage).
	return Buffer[T]{host: hugepage.Make[T](n)}
}

// Upload copies src into dst[off:off+len(src)] (host to device); src may
// change once Upload returns.
func Upload[T Elem](dev Device, dst Buffer[T], off int, src []T) {
	if off < 0 || off+len(src) > dst.Len() {
		shapePanic("Upload: %d elements at %d into a buffer of %d", len(src), off, dst.Len())
	}
	if g := dev.memory(); g != nil {
		if len(src) > 0 {
			g.h2d(dst.addr(off), unsafe.Pointer(&src[0]), int64(len(src))*elemSize[T]())
		}
		return
	}
	copy(dst.host[off:], src)
}

// Download copies src[off:off+len(dst)] into dst (device to host), after
// the device's work queued before it.
func Download[T Elem](dev Device, dst []T, src Buffer[T], off int) {
	if off < 0 || off+len(dst) > src.Len() {
		shapePanic("Download: %d elements at %d from a buffer of %d", len(dst), off, src.Len())
	}
	if g := dev.memory(); g != nil {
		if len(dst) > 0 {
			g.d2h(unsafe.Pointer(&dst[0]), src.addr(off), int64(len(dst))*elemSize[T]())
		}
		return
	}
	copy(dst, src.host[off:])
}

// Slice returns the elements [lo, hi) of b as a buffer sharing its memory.
func (b Buffer[T]) Slice(lo, hi int) Buffer[T] {
	if lo < 0 || hi < lo || hi > b.Len() {
		shapePanic("Slice [%d:%d] of a buffer of %d", lo, hi, b.Len())
	}
	if b.blk != nil {
		s := Buffer[T]{blk: b.blk, off: b.off + lo, n: hi - lo}
		if b.shadow != nil {
			s.shadow = b.shadow[lo:hi:hi]
		}
		return s
	}
	return Buffer[T]{host: b.host[lo:hi:hi]}
}

// view is the geometry every matrix view shares, over a buffer of T:
// element (i, j) is element off + i*strid + j of buf. Mat and MatBF16
// embed it, so they have the same checks, slicing and copies.
type view[T Elem] struct {
	buf               Buffer[T]
	rows, cols, strid int
	off               int
}

// Rows returns the number of rows of the view.
func (m view[T]) Rows() int { return m.rows }

// Cols returns the number of columns of the view.
func (m view[T]) Cols() int { return m.cols }

// Stride returns the distance in elements between rows.
func (m view[T]) Stride() int { return m.strid }

func (m view[T]) String() string { return fmt.Sprintf("%d×%d/%d", m.rows, m.cols, m.strid) }

// newView returns the rows×cols view of buf with the given stride,
// checked; op names the constructor in a panic.
func newView[T Elem](op string, buf Buffer[T], rows, cols, stride int) view[T] {
	m := view[T]{buf: buf, rows: rows, cols: cols, strid: stride}
	m.check(op, "")
	return m
}

// slice returns rows [r0, r1) and columns [c0, c1) of m, sharing storage.
func (m view[T]) slice(r0, r1, c0, c1 int) view[T] {
	if r0 < 0 || r1 < r0 || r1 > m.rows || c0 < 0 || c1 < c0 || c1 > m.cols {
		shapePanic("Slice [%d:%d, %d:%d] of %d×%d", r0, r1, c0, c1, m.rows, m.cols)
	}
	return view[T]{buf: m.buf, rows: r1 - r0, cols: c1 - c0, strid: m.strid, off: m.off + r0*m.strid + c0}
}

// check panics unless the view lies inside its buffer; op and role
// (e.g. "Add", "dst") name it in the message.
func (m view[T]) check(op, role string) {
	if m.rows < 0 || m.cols < 0 || m.strid < m.cols || m.off < 0 {
		shapePanic("%s %s: %d×%d with stride %d at %d", op, role, m.rows, m.cols, m.strid, m.off)
	}
	if m.rows > 0 && m.cols > 0 && m.off+(m.rows-1)*m.strid+m.cols > m.buf.Len() {
		shapePanic("%s %s: %d×%d with stride %d at %d needs %d elements, buffer has %d",
			op, role, m.rows, m.cols, m.strid, m.off, m.off+(m.rows-1)*m.strid+m.cols, m.buf.Len())
	}
}

// flat returns the elements of a contiguous view as a buffer sharing its
// memory; a strided view panics.
func (m view[T]) flat() Buffer[T] {
	m.check("Flat", "")
	if !m.contiguous() {
		shapePanic("Flat of the strided view %v", m)
	}
	return m.buf.Slice(m.off, m.off+m.rows*m.cols)
}

// data returns the host elements of the view, from its first element to
// its last (nil when empty).
func (m view[T]) data() []T {
	if m.rows == 0 || m.cols == 0 {
		return nil
	}
	end := m.off + (m.rows-1)*m.strid + m.cols
	return m.buf.host[m.off:end:end]
}

// row returns row i of the view.
func (m view[T]) row(i int) []T {
	o := m.off + i*m.strid
	return m.buf.host[o : o+m.cols : o+m.cols]
}

// contiguous reports whether the view's elements are one gap-free run.
func (m view[T]) contiguous() bool { return m.strid == m.cols || m.rows <= 1 }

// Mat is a row-major matrix view of a float32 Buffer: element (i, j) is
// element off + i*stride + j of the buffer. Views share storage; Slice
// narrows one without copying, so column blocks have stride > cols.
type Mat struct{ view[float32] }

// Matrix returns the rows×cols view with stride cols of buf's first
// rows*cols elements.
func Matrix(buf Buffer[float32], rows, cols int) Mat {
	return MatrixStride(buf, rows, cols, cols)
}

// MatrixStride returns the rows×cols view of buf with the given stride.
func MatrixStride(buf Buffer[float32], rows, cols, stride int) Mat {
	return Mat{newView("Matrix", buf, rows, cols, stride)}
}

// Slice returns rows [r0, r1) and columns [c0, c1) of m, sharing storage.
func (m Mat) Slice(r0, r1, c0, c1 int) Mat { return Mat{m.slice(r0, r1, c0, c1)} }

// Flat returns the elements of a contiguous view (stride == cols, or one
// row) as a buffer sharing its memory, for collectives and
// redistributions, which move buffers; a strided view panics.
func (m Mat) Flat() Buffer[float32] { return m.flat() }

// UploadMat copies the row-major rows×cols host matrix src into the view
// dst (host to device); len(src) must be Rows·Cols.
func UploadMat(dev Device, dst Mat, src []float32) { uploadView(dev, "UploadMat", dst.view, src) }

// DownloadMat copies the view src into the row-major host matrix dst
// (device to host); len(dst) must be Rows·Cols.
func DownloadMat(dev Device, dst []float32, src Mat) { downloadView(dev, "DownloadMat", dst, src.view) }

func uploadView[T Elem](dev Device, op string, dst view[T], src []T) {
	dst.check(op, "dst")
	checkLen2(op, "src", len(src), dst.rows*dst.cols)
	if dev.memory() != nil {
		for i := range dst.rows {
			Upload(dev, dst.buf, dst.off+i*dst.strid, src[i*dst.cols:(i+1)*dst.cols])
		}
		return
	}
	if sameMemory(src, dst) {
		return
	}
	for i := range dst.rows {
		copy(dst.row(i), src[i*dst.cols:])
	}
}

func downloadView[T Elem](dev Device, op string, dst []T, src view[T]) {
	src.check(op, "src")
	checkLen2(op, "dst", len(dst), src.rows*src.cols)
	if dev.memory() != nil {
		if src.contiguous() {
			Download(dev, dst, src.buf, src.off)
			return
		}
		for i := range src.rows {
			Download(dev, dst[i*src.cols:(i+1)*src.cols], src.buf, src.off+i*src.strid)
		}
		return
	}
	if sameMemory(dst, src) {
		return
	}
	for i := range src.rows {
		copy(dst[i*src.cols:(i+1)*src.cols], src.row(i))
	}
}

// sameMemory reports that the host slice h is the host view v's memory,
// element for element (v Shares h): an upload or download between them
// has nothing to move, and a host device's output written into a Share
// of the caller's slice is already there.
func sameMemory[T Elem](h []T, v view[T]) bool {
	return len(h) > 0 && v.contiguous() && &h[0] == &v.buf.host[v.off]
}
