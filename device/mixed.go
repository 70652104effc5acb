package device

import (
	"encoding"
	"sync"

	"scalegnn/internal/enum"
	"scalegnn/spmm"
)

// Mixed precision (train.precision = "bf16"): the products of a training
// step read bfloat16 operands and sum in float32, while everything else
// (storage between operations, the element-wise work, the loss, norms,
// reductions, weights and the optimizer) stays float32.
//
// The rule lives here, in one place, rather than in each model: every
// method (gcn, neighbor, cagnet, infer) and every layer calls SpMM and
// Gemm through its Device, so a Device that rounds their dense operands
// to bfloat16 (spmm.ToBF16, nearest even) and runs the bf16 products makes
// all of them train in mixed precision without a line of their own. The
// sparse operand keeps its float32 values on the host devices (a GPU's
// cuSPARSE rounds them too; see CUDA.SpMMBF16). GAT's attention
// aggregation (SpMMHeads) and its edge scores stay float32: there is no
// bfloat16 kernel for them.
//
// What it costs: each product first packs its dense operands into
// bfloat16 staging buffers (a pass that reads 4 and writes 2 bytes an
// element), held by the wrapper and grown to the largest product seen, so
// a steady step allocates nothing. The staging holds at most the largest
// dense operand of an SpMM and the two of a Gemm at once: StagingBytes
// reports it, and the memory model counts it (perfmodel). Where a model
// reads one operand in several products, it may round it once itself and
// call the BF16Ops directly, and keep in bfloat16 what only products read:
// gcn's GCN and SAGE layers keep H (and GCN hidden outputs) in bfloat16
// only (gcn/mixed.go), and so does 1.5D's tape (cagnet/mixed.go), with
// the same bits. The other activations (norms, residuals, GAT) stay
// float32 and are packed here.

// Precision is the arithmetic of a training step's products: the one
// type the job file's train.precision, the memory model and summary.json
// decode into ("float32", "bf16").
type Precision int

const (
	// Float32 products: float32 operands and sums.
	Float32 Precision = iota
	// BF16 products: bfloat16 operands, float32 sums.
	BF16
)

var (
	_ encoding.TextMarshaler   = Float32
	_ encoding.TextUnmarshaler = (*Precision)(nil)
)

var precisionNames = []string{"float32", "bf16"}

// ParsePrecision parses "float32" or "bf16".
func ParsePrecision(s string) (Precision, error) {
	return enum.Parse[Precision]("precision", s, precisionNames)
}

func (p Precision) String() string { return enum.Name("Precision", p, precisionNames) }

// MarshalText returns the name ParsePrecision accepts.
func (p Precision) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses a name ParsePrecision accepts.
func (p *Precision) UnmarshalText(b []byte) error {
	v, err := ParsePrecision(string(b))
	if err == nil {
		*p = v
	}
	return err
}

// WithPrecision returns dev itself for Float32, and for BF16 a Device
// that runs SpMM and Gemm as the bf16 products on dev (BF16Products).
func WithPrecision(dev Device, p Precision) Device {
	if p == BF16 {
		return BF16Products(dev)
	}
	return dev
}

// BF16Products returns a Device that is dev except for SpMM and Gemm: they
// round their dense operands to bfloat16 and run dev's SpMMBF16 and
// GemmBF16, with float32 sums and a float32 dst. Wrapping a device that
// is already wrapped returns it unchanged.
func BF16Products(dev Device) Device {
	if _, ok := dev.(*bf16Products); ok {
		return dev
	}
	return &bf16Products{Device: dev}
}

// bf16Products is BF16Products' Device. Its two staging buffers are
// shared by every call, so the products take turns (mu): a host device
// runs one product at a time anyway, and a GPU queues them on one stream.
type bf16Products struct {
	Device
	mu   sync.Mutex
	a, b Buffer[uint16] // staging of the first and second dense operand
}

var _ Device = (*bf16Products)(nil)

// Describe is the wrapped device's, with the products' precision.
func (d *bf16Products) Describe() string {
	return d.Device.Describe() + "; bf16 products (float32 sums)"
}

// Sync waits for the wrapped device's queued work, where it queues any.
func (d *bf16Products) Sync() {
	if s, ok := d.Device.(interface{ Sync() }); ok {
		s.Sync()
	}
}

// unwrap is the wrapped device, for what asks of the device itself
// (MemoryInfo, CopyBuffer).
func (d *bf16Products) unwrap() Device { return d.Device }

// unwrapped is dev without a mixed-precision wrapper.
func unwrapped(dev Device) Device {
	if w, ok := dev.(interface{ unwrap() Device }); ok {
		return w.unwrap()
	}
	return dev
}

// SpMM computes dst = a·b with b rounded to bfloat16 and float32 sums.
func (d *bf16Products) SpMM(dst Mat, a *CSR, b Mat) {
	checkSpMMViews("SpMM", dst.view, a, b.view)
	d.mu.Lock()
	defer d.mu.Unlock()
	bh := d.stage(&d.b, b)
	d.Device.SpMMBF16(dst, a, bh)
}

// SpMMToBF16 computes dst = a·b on a mixed-precision device
// (BF16Products): b rounded to bfloat16 in the device's staging, float32
// sums, each rounded once into the bfloat16 dst (SpMMBF16ToBF16). It is
// SpMM followed by PackMatBF16 of its result, bit for bit, without the
// float32 result or a bfloat16 copy of b beyond the staging. Any other
// device panics: the caller checks PrecisionOf.
func SpMMToBF16(dev Device, dst MatBF16, a *CSR, b Mat) {
	d, ok := dev.(*bf16Products)
	if !ok {
		shapePanic("SpMMToBF16 on %s: for a mixed-precision device (BF16Products)", dev.Name())
	}
	checkSpMMViews("SpMMToBF16", dst.view, a, b.view)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Device.SpMMBF16ToBF16(dst, a, d.stage(&d.b, b))
}

// Gemm computes dst = alpha·op(a)·op(b) + beta·dst with a and b rounded
// to bfloat16, float32 products and sums.
func (d *bf16Products) Gemm(tA, tB spmm.Op, alpha float32, a, b Mat, beta float32, dst Mat) {
	checkGemmViews("Gemm", tA, tB, a.view, b.view, dst.view)
	d.mu.Lock()
	defer d.mu.Unlock()
	ah := d.stage(&d.a, a)
	bh := d.stage(&d.b, b)
	d.Device.GemmBF16(tA, tB, alpha, ah, bh, beta, dst)
}

// stage rounds m into the staging buffer *buf, growing it (never
// shrinking) to m's size, and returns the packed, contiguous view.
func (d *bf16Products) stage(buf *Buffer[uint16], m Mat) MatBF16 {
	n := m.rows * m.cols
	if buf.Len() < n {
		Free(d.Device, *buf)
		*buf = Alloc[uint16](d.Device, n)
	}
	v := MatrixBF16(buf.Slice(0, n), m.rows, m.cols)
	d.Device.PackMatBF16(v, m)
	return v
}

// StagingBytes is the memory dev holds beyond its buffers for mixed
// precision: the bf16 products' staging, 0 for any other device.
func StagingBytes(dev Device) int64 {
	d, ok := dev.(*bf16Products)
	if !ok {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return 2 * int64(d.a.Len()+d.b.Len())
}

// PrecisionOf is the products' precision of dev.
func PrecisionOf(dev Device) Precision {
	if _, ok := dev.(*bf16Products); ok {
		return BF16
	}
	return Float32
}
