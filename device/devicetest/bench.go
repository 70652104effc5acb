package devicetest

import (
	"testing"

	"scalegnn/device"
)

// BenchKernels times dev's element-wise kernels, the fused optimizer and
// the bfloat16 packing on rows×cols float32 operands (pick them larger
// than the last-level cache) and reports each as GB/s through b.SetBytes:
// the bytes a kernel must read and write at least, once each, as STREAM
// counts them. Compare with a STREAM triad on the same threads (see the
// device's bench_test.go) to read a kernel's fraction of the bandwidth.
func BenchKernels(b *testing.B, dev device.Device, rows, cols int) {
	r := newRand(2)
	n := rows * cols
	x := newMat(dev, rows, cols, 0, r, normal)
	y := newMat(dev, rows, cols, 0, r, normal)
	u := newMat(dev, rows, cols, 0, r, nil)
	verts := make([]int32, rows)
	for i := range verts {
		verts[i] = int32(r.IntN(rows))
	}
	spec := device.Dropout{Seed: 1, Step: 2, Site: 0, P: 0.5, Verts: upload(dev, verts)}
	wpr := (cols + 63) / 64
	keep := device.Alloc[uint64](dev, rows*wpr)
	vec := device.Alloc[float32](dev, rows)
	vec2 := device.Alloc[float32](dev, rows)
	rms := device.Alloc[float32](dev, rows)
	scale := upload(dev, make([]float32, cols))
	gs := device.Alloc[float32](dev, cols)
	dev.SumSquares(vec, x.m)
	w, g, m, v := device.Alloc[float32](dev, n), device.Alloc[float32](dev, n), device.Alloc[float32](dev, n), device.Alloc[float32](dev, n)
	h := device.Alloc[uint16](dev, n)
	st := device.OptimStep{Kind: device.Adam, LR: 0.01, WeightDecay: 5e-4, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8, Corr1: 0.1, Corr2: 0.001}
	norm := device.RMSNorm{N: cols, Eps: 1e-6}
	bits := float64(rows*wpr*8) / float64(n) // mask bytes per element
	ops := []struct {
		name  string
		bytes float64 // per element
		f     func()
	}{
		{"Copy", 8, func() { dev.Copy(y.m, x.m) }},
		{"Add", 12, func() { dev.Add(y.m, x.m, y.m) }},
		{"Scale", 8, func() { dev.Scale(y.m, 0.5, x.m) }},
		{"ReLU", 8, func() { dev.ReLU(y.m, x.m) }},
		{"ReLUBackward", 12, func() { dev.ReLUBackward(y.m, y.m, x.m) }},
		{"ReLURecord", 8 + bits, func() { dev.ReLURecord(y.m, x.m, keep) }},
		{"ReLUBackwardBits", 8 + bits, func() { dev.ReLUBackwardBits(y.m, y.m, keep) }},
		{"Dropout", 8, func() { dev.Dropout(y.m, x.m, spec) }},
		{"DropoutRecord", 8 + bits, func() { dev.DropoutRecord(y.m, x.m, keep, spec) }},
		{"ReLUDropoutRecord", 8 + bits, func() { dev.ReLUDropoutRecord(y.m, x.m, keep, spec) }},
		{"ApplyMask", 8 + bits, func() { dev.ApplyMask(y.m, x.m, keep, 0.5) }},
		{"SumSquares", 4, func() { dev.SumSquares(vec2, x.m) }},
		{"RMSNormApply+ReLU", 12, func() { dev.RMSNormApply(y.m, u.m, rms, x.m, vec, scale, norm, true) }},
		{"RMSNormBackwardLocal", 8, func() { dev.RMSNormBackwardLocal(gs, vec2, x.m, u.m, scale) }},
		{"RMSNormBackwardFinish", 12, func() { dev.RMSNormBackwardFinish(y.m, x.m, u.m, scale, vec, rms, norm) }},
		{"OptimStep", 28, func() { dev.OptimStep(w, g, m, v, st) }},
		{"PackBF16", 6, func() { dev.PackBF16(h, w) }},
		{"UnpackBF16", 6, func() { dev.UnpackBF16(w, h) }},
		{"GatherRows", 8, func() { dev.GatherRows(y.m, x.m, spec.Verts) }},
		{"ScatterAddRows", 12, func() { dev.ScatterAddRows(y.m, x.m, spec.Verts) }},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			b.SetBytes(int64(op.bytes * float64(n)))
			op.f() // touch every page outside the timing
			syncDevice(dev)
			b.ResetTimer()
			for range b.N {
				op.f()
			}
			syncDevice(dev) // a GPU's kernels run after their launch returns

		})
	}
}

// syncDevice waits for a device that queues its work (a GPU).
func syncDevice(dev device.Device) {
	if s, ok := dev.(interface{ Sync() }); ok {
		s.Sync()
	}
}
