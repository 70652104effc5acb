package devicetest

import (
	"fmt"
	"testing"

	"scalegnn/device"
	"scalegnn/spmm"
)

// testMixed checks device.BF16Products(dev), the mixed-precision device of
// train.precision = "bf16": its SpMM and Gemm must be dev's SpMMBF16 and
// GemmBF16 on the operands rounded by dev's PackMatBF16, bit for bit (the
// same device runs both, so nothing may differ), on strided float32 views
// that must not be written outside dst. Everything else is dev's own. The
// staging grows to the largest operands and stays.
func testMixed(t *testing.T, dev device.Device) {
	w := device.BF16Products(dev)
	if device.PrecisionOf(w) != device.BF16 || device.PrecisionOf(dev) != device.Float32 {
		t.Fatalf("PrecisionOf: wrapper %v, device %v", device.PrecisionOf(w), device.PrecisionOf(dev))
	}
	if device.BF16Products(w) != w || device.WithPrecision(dev, device.Float32) != dev {
		t.Fatal("BF16Products of a wrapped device wraps it again, or WithPrecision(Float32) wraps")
	}
	if w.Name() != dev.Name() {
		t.Errorf("wrapped Name %q, want the device's %q", w.Name(), dev.Name())
	}
	pack := func(m *hmat) device.MatBF16 {
		h := device.MatrixBF16(device.Alloc[uint16](dev, m.rows*m.cols), m.rows, m.cols)
		dev.PackMatBF16(h, m.m)
		return h
	}
	most := 0
	spmmCases(t, dev, func(c spmmCase) {
		b := newMat(dev, c.cols, c.width, c.pad, c.r, normal)
		got := newMat(dev, c.rows, c.width, c.pad+1, c.r, normal)
		want := newMat(dev, c.rows, c.width, 0, nil, nil)
		w.SpMM(got.m, c.da, b.m)
		dev.SpMMBF16(want.m, c.da, pack(b))
		exact(t, "mixed SpMM "+c.name, got.get(t, dev, "mixed SpMM"), want.get(t, dev, "SpMMBF16"))
		exact(t, "mixed SpMM's operand "+c.name, b.get(t, dev, "mixed SpMM's operand"), b.want)
		most = max(most, c.cols*c.width)
		// SpMMToBF16 is that SpMM rounded once, without its float32 result.
		gotH := newBF16(dev, c.rows, c.width, c.pad+2, c.r, normal)
		device.SpMMToBF16(w, gotH.m, c.da, b.m)
		wantH := device.MatrixBF16(device.Alloc[uint16](dev, c.rows*c.width), c.rows, c.width)
		dev.PackMatBF16(wantH, want.m)
		wh := make([]uint16, c.rows*c.width)
		device.DownloadMatBF16(dev, wh, wantH)
		gh := gotH.get(t, dev, "SpMMToBF16")
		for k := range wh {
			if gh[k] != wh[k] {
				t.Fatalf("SpMMToBF16 %s: element %d = %#x, want the mixed SpMM's rounded, %#x", c.name, k, gh[k], wh[k])
			}
		}
	})
	gemmCases(gemmForms, func(c gemmCase) {
		a := newMat(dev, c.ar, c.ac, 1, c.r, normal)
		b := newMat(dev, c.br, c.bc, 2, c.r, normal)
		got := c.dst(dev)
		want := newMat(dev, c.m, c.n, 0, nil, nil)
		device.UploadMat(dev, want.m, got.want)
		w.Gemm(c.tA, c.tB, c.alpha, a.m, b.m, c.beta, got.m)
		dev.GemmBF16(c.tA, c.tB, c.alpha, pack(a), pack(b), c.beta, want.m)
		exact(t, "mixed Gemm "+c.name, got.get(t, dev, "mixed Gemm"), want.get(t, dev, "GemmBF16"))
	})
	if s := device.StagingBytes(w); s < int64(2*most) {
		t.Errorf("StagingBytes %d after an SpMM of %d operand elements, want at least %d", s, most, 2*most)
	}
	if s := device.StagingBytes(dev); s != 0 {
		t.Errorf("StagingBytes of the unwrapped device %d, want 0", s)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("SpMMToBF16 on a device without mixed precision did not panic")
			}
		}()
		hb := device.MatrixBF16(device.Alloc[uint16](dev, 1), 1, 1)
		device.SpMMToBF16(dev, hb, dev.UploadCSR(&spmm.CSR{Rows: 1, Cols: 1, RowPtr: make([]int64, 2)}), device.Matrix(device.Alloc[float32](dev, 1), 1, 1))
	}()
}

// TestMixedAllocs checks that the mixed-precision device's products
// allocate nothing once its staging has grown to their operands.
func TestMixedAllocs(t *testing.T, dev device.Device) {
	const n, width = 2000, 32
	r := newRand(4)
	w := device.BF16Products(dev)
	a := w.UploadCSR(allocCSR(r, n))
	x := newMat(w, n, width, 0, r, normal)
	y := device.Matrix(device.Alloc[float32](w, n*width), n, width)
	wt := newMat(w, width, width, 0, r, normal)
	xt := newMat(w, width, n, 0, r, normal)
	ops := []allocOp{{"mixed SpMM", func() { w.SpMM(y, a, x.m) }}}
	for _, f := range gemmForms {
		// op(a) is x (n×width) or xᵀ; op(b) makes the product's inner
		// dimension agree: wt (width×width), or xt (width×n) for xᵀ·xtᵀ.
		b, dst := wt.m, y
		switch {
		case bool(f.tA && f.tB):
			b, dst = xt.m, wt.m
		case bool(f.tA):
			b, dst = y, wt.m
		}
		ops = append(ops, allocOp{fmt.Sprintf("mixed Gemm %s", f.name), func() { w.Gemm(f.tA, f.tB, 1, x.m, b, 0, dst) }})
	}
	for _, op := range ops {
		op.f() // grows the staging
		if got := testing.AllocsPerRun(10, op.f); got != 0 {
			t.Errorf("%s allocates %v times per call once its staging has grown", op.name, got)
		}
	}
}
