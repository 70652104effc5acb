package spmm

import "math"

// bfloat16 keeps the sign, the 8 exponent bits and the top 7 mantissa bits
// of a float32: the same range, about 3 significant decimal digits, half
// the bytes. It is stored as uint16 (the high half of the float32's bits).
// Widening it to float32 is exact (a 16-bit shift); narrowing rounds to
// nearest, ties to even, here and only here (ToBF16): collectives.ToBF16,
// the devices' PackBF16 (Native calls it; the C and CUDA kernels are
// checked against it by devicetest) and the C kernels of spmm/cpu that
// write bfloat16 follow it bit for bit.

// ToBF16 rounds f to the nearest bfloat16, ties to even. Infinities stay
// infinite, a NaN stays a quiet NaN (its sign and top payload bits kept),
// and a finite value too large for bfloat16 rounds to infinity, as IEEE
// rounding does. Subnormals round like any other value (no flush to zero).
func ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40 // keep it a NaN whatever the lost bits were
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// FromBF16 widens a bfloat16 to float32 exactly.
func FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// RoundBF16 returns f rounded to bfloat16 and widened back: the float32
// value a bfloat16 store of f keeps.
func RoundBF16(f float32) float32 { return FromBF16(ToBF16(f)) }

// DenseBF16 is a row-major bfloat16 matrix view, the counterpart of Dense:
// element (i, j) is Data[i*Stride+j]. Stride >= Cols; len(Data) >=
// (Rows-1)*Stride+Cols when Rows > 0.
type DenseBF16 struct {
	Rows, Cols, Stride int
	Data               []uint16
}

// NewDenseBF16 allocates a zeroed r×c bfloat16 matrix with Stride c.
func NewDenseBF16(r, c int) DenseBF16 {
	return DenseBF16{Rows: r, Cols: c, Stride: c, Data: make([]uint16, r*c)}
}

// Check panics with a ShapeError unless d is a well-formed view (as
// Dense.Check).
func (d DenseBF16) Check(name string) { checkView(name, d.Rows, d.Cols, d.Stride, len(d.Data)) }

// At returns element (i, j) of d widened to float32.
func (d DenseBF16) At(i, j int) float32 {
	if uint(i) >= uint(d.Rows) || uint(j) >= uint(d.Cols) {
		shapePanic("At(%d, %d) outside %d×%d", i, j, d.Rows, d.Cols)
	}
	return FromBF16(d.Data[i*d.Stride+j])
}

// SliceBF16 returns the view of rows [r0, r1) and columns [c0, c1) of d,
// sharing its storage (as Slice).
func SliceBF16(d DenseBF16, r0, r1, c0, c1 int) DenseBF16 {
	return DenseBF16{Rows: r1 - r0, Cols: c1 - c0, Stride: d.Stride, Data: sliceData("SliceBF16", d.Data, d.Rows, d.Cols, d.Stride, r0, r1, c0, c1)}
}

// EncodeBF16 rounds src into dst (ToBF16 on every element); the shapes must
// agree.
func EncodeBF16(dst DenseBF16, src Dense) {
	checkConvert("EncodeBF16", dst, src)
	if src.Cols == 0 {
		return // an empty view's rows need not lie inside Data
	}
	for i := range src.Rows {
		d := dst.Data[i*dst.Stride : i*dst.Stride+dst.Cols]
		for j, v := range src.Data[i*src.Stride : i*src.Stride+src.Cols] {
			d[j] = ToBF16(v)
		}
	}
}

// DecodeBF16 widens src into dst (exactly); the shapes must agree.
func DecodeBF16(dst Dense, src DenseBF16) {
	checkConvert("DecodeBF16", src, dst)
	if src.Cols == 0 {
		return // an empty view's rows need not lie inside Data
	}
	for i := range src.Rows {
		d := dst.Data[i*dst.Stride : i*dst.Stride+dst.Cols]
		for j, h := range src.Data[i*src.Stride : i*src.Stride+src.Cols] {
			d[j] = FromBF16(h)
		}
	}
}

func checkConvert(name string, h DenseBF16, f Dense) {
	h.Check(name + " bf16")
	f.Check(name + " float32")
	if h.Rows != f.Rows || h.Cols != f.Cols {
		shapePanic("%s: bf16 %d×%d, float32 %d×%d", name, h.Rows, h.Cols, f.Rows, f.Cols)
	}
}

// CheckSpMMBF16 panics with a ShapeError unless dst = a·b is well formed
// for a bfloat16 b (as CheckSpMM). dst is a Dense or a DenseBF16.
func CheckSpMMBF16[D Dense | DenseBF16](dst D, a *CSR, b DenseBF16) {
	rows, cols := checkAnyView("SpMM dst", dst)
	b.Check("SpMM b")
	checkSpMMShapes(rows, cols, a, b.Rows, b.Cols)
}

// MaskedBF16 is one element of a masked bfloat16 product
// (SpMMBF16ToBF16Masked) from its float32 sum v: where pos is clear +0,
// else v times scale where keep is set or times 0 where it is not (a
// signed zero, NaN for an infinite v), rounded once (ToBF16). It is a
// dropout's mask and scale applied to a gradient, then a ReLU's select,
// then the rounding, in that order: the one place of the rule, which the
// C kernel and the devices are checked against.
func MaskedBF16(v float32, keep, pos bool, scale float32) uint16 {
	if !pos {
		return 0
	}
	if keep {
		return ToBF16(v * scale)
	}
	return ToBF16(v * 0)
}

// MaskWords is the 64-bit words of a row of a bit mask over cols columns
// (bit j%64 of word j/64 for column j), the layout of the masked
// product's keep and pos.
func MaskWords(cols int) int { return (cols + 63) / 64 }

// CheckSpMMBF16Masked panics with a ShapeError unless dst = a·b is well
// formed for a bfloat16 b and keep and pos hold MaskWords(dst.Cols) words
// for each of dst's rows.
func CheckSpMMBF16Masked(dst DenseBF16, a *CSR, b DenseBF16, keep, pos []uint64) {
	CheckSpMMBF16(dst, a, b)
	if n := dst.Rows * MaskWords(dst.Cols); len(keep) != n || len(pos) != n {
		shapePanic("SpMMBF16ToBF16Masked: masks of %d and %d words for a %d×%d dst, want %d", len(keep), len(pos), dst.Rows, dst.Cols, n)
	}
}

// CheckGemmBF16 panics with a ShapeError unless dst = op(a)·op(b) is well
// formed for bfloat16 a and b (as CheckGemm), and returns m, n, k.
func CheckGemmBF16(tA, tB Op, a, b DenseBF16, dst Dense) (m, n, k int) {
	a.Check("Gemm a")
	b.Check("Gemm b")
	dst.Check("Gemm dst")
	return checkGemmShapes(tA, tB, a.Rows, a.Cols, b.Rows, b.Cols, dst.Rows, dst.Cols)
}

// checkAnyView checks a Dense or DenseBF16 and returns its dimensions.
func checkAnyView[D Dense | DenseBF16](name string, d D) (rows, cols int) {
	switch v := any(d).(type) {
	case Dense:
		v.Check(name)
		return v.Rows, v.Cols
	case DenseBF16:
		v.Check(name)
		return v.Rows, v.Cols
	}
	panic("unreachable")
}
