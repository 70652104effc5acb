package devicetest

import (
	"testing"

	"scalegnn/device"
)

// TestAllocs checks that the element-wise operations, the optimizer and
// the bfloat16 packing allocate nothing on preallocated buffers, at a size
// the CPU device splits over its workers (SpMM and GEMM are spmm's and
// not covered).
func TestAllocs(t *testing.T, dev device.Device) {
	const rows, cols = 512, 128
	r := newRand(1)
	x := newMat(dev, rows, cols, 0, r, normal)
	y := newMat(dev, rows, cols, 0, r, normal)
	u := newMat(dev, rows, cols, 0, r, nil)
	verts := make([]int32, rows)
	for i := range verts {
		verts[i] = int32(i)
	}
	spec := device.Dropout{Seed: 1, Step: 2, Site: 0, P: 0.5, Verts: upload(dev, verts)}
	keep := device.Alloc[uint64](dev, rows*2)
	vec := upload(dev, make([]float32, rows))
	rms := device.Alloc[float32](dev, rows)
	scale := upload(dev, make([]float32, cols))
	n := rows * cols
	w, g, m, v := device.Alloc[float32](dev, n), device.Alloc[float32](dev, n), device.Alloc[float32](dev, n), device.Alloc[float32](dev, n)
	h := device.Alloc[uint16](dev, n)
	st := device.OptimStep{Kind: device.Adam, LR: 0.01, WeightDecay: 5e-4, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8, Corr1: 0.1, Corr2: 0.001}
	norm := device.RMSNorm{N: cols, Eps: 1e-6}
	ops := []struct {
		name string
		f    func()
	}{
		{"Add", func() { dev.Add(y.m, x.m, y.m) }},
		{"Scale", func() { dev.Scale(y.m, 0.5, x.m) }},
		{"ReLU", func() { dev.ReLU(y.m, x.m) }},
		{"ReLUBackward", func() { dev.ReLUBackward(y.m, y.m, x.m) }},
		{"ReLURecord", func() { dev.ReLURecord(y.m, x.m, keep) }},
		{"ReLUBackwardBits", func() { dev.ReLUBackwardBits(y.m, y.m, keep) }},
		{"DropoutRecord", func() { dev.DropoutRecord(y.m, x.m, keep, spec) }},
		{"ReLUDropoutRecord", func() { dev.ReLUDropoutRecord(y.m, x.m, keep, spec) }},
		{"ApplyMask", func() { dev.ApplyMask(y.m, x.m, keep, 0.5) }},
		{"SumSquares", func() { dev.SumSquares(vec, x.m) }},
		{"RMSNormApply", func() { dev.RMSNormApply(y.m, u.m, rms, x.m, vec, scale, norm, true) }},
		{"RMSNormBackwardLocal", func() { dev.RMSNormBackwardLocal(scale, vec, x.m, u.m, scale) }},
		{"OptimStep", func() { dev.OptimStep(w, g, m, v, st) }},
		{"PackBF16", func() { dev.PackBF16(h, w) }},
		{"GatherRows", func() { dev.GatherRows(y.m, x.m, spec.Verts) }},
		{"ScatterAddRows", func() { dev.ScatterAddRows(y.m, x.m, spec.Verts) }},
	}
	for _, op := range ops {
		if a := testing.AllocsPerRun(20, op.f); a != 0 {
			t.Errorf("%s allocates %v times per call on preallocated buffers", op.name, a)
		}
	}
}
