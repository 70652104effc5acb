package devicetest

import (
	"testing"

	"scalegnn/device"
	"scalegnn/spmm"
)

// TestAllocs checks that the element-wise operations, the optimizer, the
// bfloat16 packing (of buffers and of strided views) and the GAT
// operations allocate nothing on
// preallocated buffers, at a size the CPU device splits over its workers
// (SpMM and GEMM are spmm's and not covered).
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
	ops := []allocOp{
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
		{"PackMatBF16", func() { dev.PackMatBF16(device.MatrixStrideBF16(h, rows, cols/2, cols), x.m.Slice(0, rows, 0, cols/2)) }},
		{"UnpackMatBF16", func() {
			dev.UnpackMatBF16(y.m.Slice(0, rows, 0, cols/2), device.MatrixStrideBF16(h, rows, cols/2, cols))
		}},
		{"ReLUBackwardBitsBF16", func() {
			hm := device.MatrixBF16(h, rows, cols)
			dev.ReLUBackwardBitsBF16(hm, hm, keep)
		}},
		{"GatherRows", func() { dev.GatherRows(y.m, x.m, spec.Verts) }},
		{"ScatterAddRows", func() { dev.ScatterAddRows(y.m, x.m, spec.Verts) }},
	}
	ops = append(ops, gatAllocOps(dev, x, y, spec.Verts)...)
	for _, op := range ops {
		if a := testing.AllocsPerRun(20, op.f); a != 0 {
			t.Errorf("%s allocates %v times per call on preallocated buffers", op.name, a)
		}
	}
}

type allocOp struct {
	name string
	f    func()
}

// gatAllocOps are the GAT operations on x's rows (8 heads of 16 columns)
// over a pattern of 12 entries a row and its transpose, with attention
// dropout: a layer's steady step.
func gatAllocOps(dev device.Device, x, y *hmat, verts device.Buffer[int32]) []allocOp {
	const heads = 8
	rows, cols := x.rows, x.cols
	r := newRand(2)
	a := gatPattern(r, gatCase{rows: rows, cols: rows, maxDeg: 24})
	at, perm := spmm.TransposePerm(a)
	da, dat, pm := dev.UploadCSR(a), dev.UploadCSR(at), upload(dev, perm)
	n := int(a.NNZ()) * heads
	e, alpha, drop := device.Alloc[float32](dev, n), device.Alloc[float32](dev, n), device.Alloc[float32](dev, n)
	s, t, mx, sums := device.Alloc[float32](dev, rows*heads), device.Alloc[float32](dev, rows*heads), device.Alloc[float32](dev, rows*heads), device.Alloc[float32](dev, rows*heads)
	att := device.Alloc[float32](dev, cols)
	g := device.GAT{Heads: heads, Slope: 0.2, Seed: 1, Step: 2, Site: 3, P: 0.5, RowVerts: verts, ColVerts: verts}
	mean := device.Matrix(device.Alloc[float32](dev, rows*cols/heads), rows, cols/heads)
	none := device.Buffer[int32]{}
	return []allocOp{
		{"HeadDot", func() { dev.HeadDot(s, x.m, att, heads) }},
		{"HeadDotBackward", func() { dev.HeadDotBackward(y.m, s, att, heads) }},
		{"HeadDotGrad", func() { dev.HeadDotGrad(att, s, x.m, heads) }},
		{"GATScores", func() { dev.GATScores(e, mx, da, s, t, g) }},
		{"GATExpSum", func() { dev.GATExpSum(e, sums, da, mx, g) }},
		{"GATNormalize", func() { dev.GATNormalize(alpha, drop, da, e, sums, g) }},
		{"SpMMHeads", func() { dev.SpMMHeads(y.m, da, drop, none, x.m, heads) }},
		{"SpMMHeads transposed", func() { dev.SpMMHeads(y.m, dat, drop, pm, x.m, heads) }},
		{"SDDMMHeads", func() { dev.SDDMMHeads(drop, da, x.m, y.m, heads) }},
		{"GATRowDot", func() { dev.GATRowDot(mx, drop, da, alpha, g) }},
		{"GATLogitGrad", func() { dev.GATLogitGrad(drop, sums, da, alpha, drop, mx, s, t, g) }},
		{"EdgeSums", func() { dev.EdgeSums(s, da, drop, none, heads) }},
		{"EdgeSums transposed", func() { dev.EdgeSums(t, dat, drop, pm, heads) }},
		{"ELU", func() { dev.ELU(y.m, x.m) }},
		{"ELUBackward", func() { dev.ELUBackward(y.m, y.m, x.m) }},
		{"HeadMean", func() { dev.HeadMean(mean, x.m, heads) }},
		{"HeadMeanBackward", func() { dev.HeadMeanBackward(y.m, mean, heads) }},
	}
}
