package devicetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"scalegnn/device"
	"scalegnn/spmm"
)

// The bfloat16 operations (device.BF16Ops). Every reference is computed
// in float64 from the same bfloat16 inputs the device reads (widening is
// exact), so the tolerances only account for the device's float32 sums
// and its one rounding to bfloat16:
//
//   - float32 sums: the bounds of testSpMM and testGemm (spmmCase and
//     gemmCase's reference), which hold for any order of summation;
//   - a bfloat16 result: one more rounding to nearest, at most half a
//     bfloat16 ulp, 2⁻⁹·|x| relative; the check allows 2⁻⁸·(|want| +
//     bound), the float32 error included;
//   - Options.SparseBF16 (CUDA: cuSPARSE multiplies by A's values rounded
//     to bfloat16): each product a·b moves by up to 2⁻⁹·|a·b|; the check
//     allows 2⁻⁸·Σ|a·b| more.
//
// On the host devices the bfloat16 SpMM must moreover equal the float32
// SpMM on the widened operand bit for bit (the same kernel and order),
// and its bfloat16 form spmm.ToBF16 of that.

// bf16Rel is the relative allowance for one rounding to bfloat16, with
// a factor 2 to spare.
const bf16Rel = 1.0 / (1 << 8)

// testBF16Mat checks PackMatBF16 against spmm.ToBF16 bit for bit, on
// random bit patterns (NaNs, infinities and subnormals among them) and
// views whose strides differ, and UnpackMatBF16 as exact widening.
func testBF16Mat(t *testing.T, dev device.Device) {
	for n, s := range shapes {
		r := newRand(uint64(2800 + n))
		name := fmt.Sprintf("%dx%d/pad%d", s.rows, s.cols, s.pad)
		src := newMat(dev, s.rows, s.cols, s.pad, r, specialsFirst())
		h := newBF16(dev, s.rows, s.cols, s.pad+1, r, nil)
		dev.PackMatBF16(h.m, src.m)
		got := h.get(t, dev, "PackMatBF16")
		for k, v := range src.want {
			if got[k] != spmm.ToBF16(v) {
				t.Fatalf("PackMatBF16 %s: element %d = %#x, want ToBF16(%#x) = %#x", name, k, got[k], math.Float32bits(v), spmm.ToBF16(v))
			}
		}
		back := newMat(dev, s.rows, s.cols, s.pad+2, r, nil)
		dev.UnpackMatBF16(back.m, h.m)
		want := make([]float32, len(got))
		for k, b := range got {
			want[k] = spmm.FromBF16(b)
		}
		exact(t, "UnpackMatBF16 "+name, back.get(t, dev, "UnpackMatBF16"), want)

		// Rows of h gathered (repeats included) into a view padded
		// otherwise: its bits copied, nothing around it written.
		idx := make([]int32, min(s.rows, 1)*(s.rows+2)) // none from no rows
		for i := range idx {
			idx[i] = r.Int32N(int32(s.rows))
		}
		g := newBF16(dev, len(idx), s.cols, s.pad+3, r, nil)
		dev.GatherRowsBF16(g.m, h.m, upload(dev, idx))
		gathered := g.get(t, dev, "GatherRowsBF16")
		for i, k := range idx {
			for j := range s.cols {
				if a, b := gathered[i*s.cols+j], got[int(k)*s.cols+j]; a != b {
					t.Fatalf("GatherRowsBF16 %s: element (%d, %d) = %#x, want row %d's %#x", name, i, j, a, k, b)
				}
			}
		}
	}
}

// specialsFirst returns a generator of bf16Specials, in order, then of
// random bit patterns one time in four and normal values otherwise.
func specialsFirst() func(*rand.Rand) float32 {
	k := 0
	return func(r *rand.Rand) float32 {
		if k < len(bf16Specials) {
			k++
			return bf16Specials[k-1]
		}
		if r.IntN(4) == 0 {
			return math.Float32frombits(r.Uint32())
		}
		return normal(r)
	}
}

// bf16Specials are the values where a rounding to bfloat16 goes wrong
// first: ties to even up and down, the largest finite values (which
// round to infinity), subnormals, infinities, NaNs whose payload lies in
// the dropped bits, −0.
var bf16Specials = []float32{
	math.Float32frombits(0x3f808000), math.Float32frombits(0x3f818000), math.Float32frombits(0xbf808000),
	math.Float32frombits(0x3f80ffff), math.Float32frombits(0x7f7fffff), math.Float32frombits(0xff7fffff),
	math.Float32frombits(0x00008000), math.Float32frombits(0x00018000), 1e-40,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
	math.Float32frombits(0x7f800001), math.Float32frombits(0xffc00001), float32(math.Copysign(0, -1)),
}

// sparseRel is the relative error of a bfloat16 product's sparse
// operand: bf16Rel on a device that rounds A (SparseBF16), else 0.
func (o Options) sparseRel() float64 {
	if o.SparseBF16 {
		return bf16Rel
	}
	return 0
}

// testSpMMBF16 checks both bfloat16 SpMMs against float64 on testSpMM's
// matrices, and on the host devices against the float32 SpMM bit for bit.
func testSpMMBF16(t *testing.T, dev device.Device, opt Options) {
	rel := opt.sparseRel()
	spmmCases(t, dev, func(c spmmCase) {
		b := newBF16(dev, c.cols, c.width, c.pad, c.r, normal)
		dst := newMat(dev, c.rows, c.width, c.pad+1, c.r, normal)
		dh := newBF16(dev, c.rows, c.width, c.pad+2, c.r, normal)
		dev.SpMMBF16(dst.m, c.da, b.m)
		dev.SpMMBF16ToBF16(dh.m, c.da, b.m)
		want, bound := c.reference(b.want, rel)
		got := dst.get(t, dev, "SpMMBF16")
		checkBound(t, "SpMMBF16 "+c.name, got, want, bound)
		gotH := dh.get(t, dev, "SpMMBF16ToBF16")
		if !opt.SparseBF16 {
			// The float32 SpMM on b widened, and one rounding of its sums.
			bw := newMat(dev, c.cols, c.width, 0, nil, nil)
			device.UploadMat(dev, bw.m, b.want)
			f32 := newMat(dev, c.rows, c.width, 0, nil, nil)
			dev.SpMM(f32.m, c.da, bw.m)
			exact(t, "SpMMBF16 against SpMM "+c.name, got, f32.get(t, dev, "SpMM"))
			for k, v := range got {
				if gotH[k] != spmm.ToBF16(v) {
					t.Fatalf("SpMMBF16ToBF16 %s: element %d = %#x, want ToBF16(%g) = %#x", c.name, k, gotH[k], v, spmm.ToBF16(v))
				}
			}
			return
		}
		widened := make([]float32, len(gotH))
		for k, h := range gotH {
			widened[k] = spmm.FromBF16(h)
			bound[k] += bf16Rel * (math.Abs(want[k]) + bound[k])
		}
		checkBound(t, "SpMMBF16ToBF16 "+c.name, widened, want, bound)
	})
}

// testSpMMBF16Masked checks SpMMBF16ToBF16Masked with random keep and
// pos bits and p 0.3 (a scale that rounds) and 0: on the host devices it
// equals SpMMBF16, ApplyMask, ReLUBackwardBits and PackMatBF16 run in
// turn on the same device, bit for bit; on a device that rounds A
// (SparseBF16), the widened result is within the float64 bound of the
// reference masked the same way, plus one rounding. dst's padding must
// stay.
func testSpMMBF16Masked(t *testing.T, dev device.Device, opt Options) {
	rel := opt.sparseRel()
	spmmCases(t, dev, func(c spmmCase) {
		b := newBF16(dev, c.cols, c.width, c.pad, c.r, normal)
		wpr := (c.width + 63) / 64
		keepH, posH := make([]uint64, c.rows*wpr), make([]uint64, c.rows*wpr)
		for k := range keepH {
			keepH[k], posH[k] = c.r.Uint64(), c.r.Uint64()
		}
		keep, pos := device.Alloc[uint64](dev, len(keepH)), device.Alloc[uint64](dev, len(posH))
		device.Upload(dev, keep, 0, keepH)
		device.Upload(dev, pos, 0, posH)
		ref, bound := c.reference(b.want, rel)
		for _, p := range []float64{0.3, 0} {
			name := fmt.Sprintf("%s p=%g", c.name, p)
			dst := newBF16(dev, c.rows, c.width, 2, nil, nil)
			dev.SpMMBF16ToBF16Masked(dst.m, c.da, b.m, keep, pos, p)
			got := dst.get(t, dev, "SpMMBF16ToBF16Masked "+name)
			if !opt.SparseBF16 {
				f := newMat(dev, c.rows, c.width, 0, nil, nil)
				want := newBF16(dev, c.rows, c.width, 0, nil, nil)
				dev.SpMMBF16(f.m, c.da, b.m)
				dev.ApplyMask(f.m, f.m, keep, p)
				dev.ReLUBackwardBits(f.m, f.m, pos)
				dev.PackMatBF16(want.m, f.m)
				wantBits := want.get(t, dev, "PackMatBF16")
				for k := range got {
					if got[k] != wantBits[k] {
						t.Fatalf("SpMMBF16ToBF16Masked %s: element %d = %#x, want %#x", name, k, got[k], wantBits[k])
					}
				}
				continue
			}
			scale := float64(float32(1 / (1 - p)))
			widened, want, bnd := make([]float32, len(got)), make([]float64, len(got)), make([]float64, len(got))
			for k, h := range got {
				i, j := k/c.width, k%c.width
				bit := func(m []uint64) bool { return m[i*wpr+j/64]>>(j%64)&1 != 0 }
				widened[k] = spmm.FromBF16(h)
				if bit(posH) && bit(keepH) {
					want[k], bnd[k] = scale*ref[k], scale*bound[k]
					bnd[k] += bf16Rel * (math.Abs(want[k]) + bnd[k])
				}
			}
			checkBound(t, "SpMMBF16ToBF16Masked "+name, widened, want, bnd)
		}
	})
}

// testGemmBF16 checks GemmBF16 in all four forms, with alpha and beta
// (beta 0 on a NaN-filled dst must not read it), on strided bfloat16
// operands against float64: a bfloat16 product is exact in float32, so
// only the sums round, within testGemm's bound.
func testGemmBF16(t *testing.T, dev device.Device) {
	gemmCases(gemmForms, func(c gemmCase) {
		a := newBF16(dev, c.ar, c.ac, 1, c.r, normal)
		b := newBF16(dev, c.br, c.bc, 2, c.r, normal)
		dst := c.dst(dev)
		want, bound := c.reference(a.want, b.want, dst.want)
		dev.GemmBF16(c.tA, c.tB, c.alpha, a.m, b.m, c.beta, dst.m)
		checkBound(t, "GemmBF16 "+c.name, dst.get(t, dev, "GemmBF16"), want, bound)
	})
}

// testGemmBF16ToBF16 checks device.GemmBF16ToBF16 (a·op(b) a block of
// rows at a time through a float32 scratch, each sum rounded once) in the
// forms it has (a not transposed) against float64, with scratch blocks
// of one row, of a few and of more than dst has: the float32 sums within
// testGemm's bound, then one rounding to bfloat16 (bf16Rel).
func testGemmBF16ToBF16(t *testing.T, dev device.Device) {
	gemmCases(gemmForms[:2], func(c gemmCase) {
		if c.beta != 0 {
			return
		}
		a := newBF16(dev, c.ar, c.ac, 1, c.r, normal)
		b := newBF16(dev, c.br, c.bc, 2, c.r, normal)
		want, bound := c.reference(a.want, b.want, nil)
		for k := range bound {
			bound[k] += bf16Rel * (math.Abs(want[k]) + bound[k])
		}
		for _, rows := range []int{1, 4, c.m + 3} {
			dst := newBF16(dev, c.m, c.n, 3, nil, nil)
			scratch := newMat(dev, rows, c.n, 1, c.r, normal)
			device.GemmBF16ToBF16(dev, c.tB, c.alpha, a.m, b.m, dst.m, scratch.m, nil)
			bits := dst.get(t, dev, "GemmBF16ToBF16")
			got := make([]float32, len(bits))
			for k, h := range bits {
				got[k] = spmm.FromBF16(h)
			}
			checkBound(t, fmt.Sprintf("GemmBF16ToBF16 %s scratch rows %d", c.name, rows), got, want, bound)
		}
	})
}

// bf16Panics are the misuses of the bfloat16 operations.
func bf16Panics(dev device.Device, m44, m43 device.Mat) []panicCase {
	hb := device.Alloc[uint16](dev, 64)
	h44 := device.MatrixBF16(hb.Slice(0, 16), 4, 4)
	h43 := device.MatrixBF16(hb.Slice(16, 28), 4, 3)
	a := dev.UploadCSR(&spmm.CSR{Rows: 4, Cols: 3, RowPtr: make([]int64, 5)})
	bits4 := device.Alloc[uint64](dev, 4) // a mask of 4 rows of up to 64 columns
	return []panicCase{
		{"MatrixBF16 past the buffer", func() { device.MatrixBF16(hb, 9, 8) }},
		{"MatrixStrideBF16 stride", func() { device.MatrixStrideBF16(hb, 2, 4, 3) }},
		{"MatBF16 Slice", func() { h44.Slice(0, 5, 0, 1) }},
		{"UploadMatBF16 length", func() { device.UploadMatBF16(dev, h44, make([]uint16, 15)) }},
		{"SpMMBF16 shapes", func() { dev.SpMMBF16(m44, a, h44) }},
		{"SpMMBF16 widths", func() { dev.SpMMBF16(m44, a, device.MatrixBF16(hb.Slice(0, 9), 3, 3)) }},
		{"SpMMBF16ToBF16 shapes", func() { dev.SpMMBF16ToBF16(h44, a, h44) }},
		{"SpMMBF16ToBF16Masked shapes", func() { dev.SpMMBF16ToBF16Masked(h44, a, h43.Slice(0, 3, 0, 3), bits4, bits4, 0.5) }},
		{"SpMMBF16ToBF16Masked keep", func() {
			dev.SpMMBF16ToBF16Masked(h43, a, h43.Slice(0, 3, 0, 3), bits4.Slice(0, 3), bits4, 0.5)
		}},
		{"SpMMBF16ToBF16Masked pos", func() {
			dev.SpMMBF16ToBF16Masked(h43, a, h43.Slice(0, 3, 0, 3), bits4, bits4.Slice(0, 3), 0.5)
		}},
		{"SpMMBF16ToBF16Masked p", func() { dev.SpMMBF16ToBF16Masked(h43, a, h43.Slice(0, 3, 0, 3), bits4, bits4, 1) }},
		{"GemmBF16 shapes", func() { dev.GemmBF16(spmm.NoTrans, spmm.Trans, 1, h44, h43, 0, m44) }},
		{"GemmBF16 dst", func() { dev.GemmBF16(spmm.NoTrans, spmm.NoTrans, 1, h44, h43, 0, m44) }},
		{"GemmBF16ToBF16 scratch", func() { device.GemmBF16ToBF16(dev, spmm.NoTrans, 1, h44, h44, h44, m43, nil) }},
		{"GemmBF16ToBF16 rows", func() {
			device.GemmBF16ToBF16(dev, spmm.NoTrans, 1, h44, h44, device.MatrixBF16(hb.Slice(0, 12), 3, 4), m44, nil)
		}},
		{"PackMatBF16 shapes", func() { dev.PackMatBF16(h43, m44) }},
		{"UnpackMatBF16 shapes", func() { dev.UnpackMatBF16(m43, h44) }},
	}
}

// allocCSR is the n×n matrix of 10n random unit entries the allocation
// tests multiply by: enough rows and nonzeros for a threaded device to
// split the SpMM.
func allocCSR(r *rand.Rand, n int) *spmm.CSR {
	ri, ci, v := make([]int32, 10*n), make([]int32, 10*n), make([]float32, 10*n)
	for k := range ri {
		ri[k], ci[k], v[k] = r.Int32N(int32(n)), r.Int32N(int32(n)), 1
	}
	return spmm.FromCOO(n, n, ri, ci, v)
}

// TestBF16ProductAllocs checks that the bfloat16 products allocate
// nothing on preallocated buffers and an uploaded CSR, at sizes a
// threaded device splits: SpMM over the CSR's chunks, GEMM in blocks of
// rows and of columns and not at all, in the four forms. The host
// devices run it where their float32 products allocate nothing too (the
// CPU device with CBLAS).
func TestBF16ProductAllocs(t *testing.T, dev device.Device) {
	const n, width = 2000, 32
	a := dev.UploadCSR(allocCSR(newRand(3), n))
	x := device.MatrixBF16(device.Alloc[uint16](dev, n*width), n, width)
	y := device.Matrix(device.Alloc[float32](dev, n*width), n, width)
	yh := device.MatrixBF16(device.Alloc[uint16](dev, n*width), n, width)
	keep, pos := device.Alloc[uint64](dev, n), device.Alloc[uint64](dev, n) // width 32: a word a row
	ops := []allocOp{
		{"SpMMBF16", func() { dev.SpMMBF16(y, a, x) }},
		{"SpMMBF16ToBF16", func() { dev.SpMMBF16ToBF16(yh, a, x) }},
		{"SpMMBF16ToBF16Masked", func() { dev.SpMMBF16ToBF16Masked(yh, a, x, keep, pos, 0.3) }},
	}
	for _, c := range []struct{ m, n, k int }{{1000, 16, 128}, {16, 1000, 128}, {8, 8, 8}} {
		buf := func(r, c int) device.MatBF16 { return device.MatrixBF16(device.Alloc[uint16](dev, r*c), r, c) }
		dst := device.Matrix(device.Alloc[float32](dev, c.m*c.n), c.m, c.n)
		for _, f := range gemmForms {
			ar, ac, br, bc := c.m, c.k, c.k, c.n
			if f.tA {
				ar, ac = ac, ar
			}
			if f.tB {
				br, bc = bc, br
			}
			am, bm := buf(ar, ac), buf(br, bc)
			ops = append(ops, allocOp{fmt.Sprintf("GemmBF16 %s %dx%dx%d", f.name, c.m, c.n, c.k), func() {
				dev.GemmBF16(f.tA, f.tB, 1, am, bm, 0.5, dst)
			}})
		}
	}
	for _, op := range ops {
		if a := testing.AllocsPerRun(10, op.f); a != 0 {
			t.Errorf("%s allocates %v times per call on preallocated buffers", op.name, a)
		}
	}
}
