package devicetest

import (
	"errors"
	"testing"

	"scalegnn/device"
	"scalegnn/spmm"
)

// testPanics checks that misuse panics with a device.ShapeError before any
// kernel runs (a C kernel would read or write out of bounds instead).
func testPanics(t *testing.T, dev device.Device) {
	buf := device.Alloc[float32](dev, 64)
	m44 := device.Matrix(buf.Slice(0, 16), 4, 4)
	m43 := device.Matrix(buf.Slice(16, 28), 4, 3)
	idx := upload(dev, []int32{0, 1, 2, 4})
	verts := upload(dev, []int32{0, 1, 2, 3})
	cases := []panicCase{
		{"Matrix past the buffer", func() { device.Matrix(buf, 9, 8) }},
		{"Upload past the buffer", func() { device.Upload(dev, buf, 60, make([]float32, 5)) }},
		{"Add shapes", func() { dev.Add(m44, m44, m43) }},
		{"Copy shapes", func() { dev.Copy(m43, m44) }},
		{"GatherRows index", func() { dev.GatherRows(m44, m44, idx) }},
		{"GatherRowsBF16 index", func() {
			b := device.MatrixBF16(device.Alloc[uint16](dev, 16), 4, 4)
			dev.GatherRowsBF16(b, b, idx)
		}},
		{"ScatterAddRows index", func() { dev.ScatterAddRows(m44, m44, idx) }},
		{"Dropout p = 1", func() { dev.Dropout(m44, m44, device.Dropout{P: 1, Verts: verts}) }},
		{"Dropout verts", func() { dev.Dropout(m44, m44, device.Dropout{P: 0.5, Verts: idx.Slice(0, 2)}) }},
		{"DropoutRecord keep", func() {
			dev.DropoutRecord(m44, m44, device.Alloc[uint64](dev, 3), device.Dropout{P: 0.5, Verts: verts})
		}},
		{"OptimStep lengths", func() {
			dev.OptimStep(buf, buf.Slice(0, 3), buf, buf, device.OptimStep{Kind: device.Adam})
		}},
		{"PackBF16 lengths", func() { dev.PackBF16(device.Alloc[uint16](dev, 3), buf) }},
		{"SumSquares length", func() { dev.SumSquares(buf.Slice(0, 3), m44) }},
		{"UploadCSR column", func() {
			dev.UploadCSR(&spmm.CSR{Rows: 1, Cols: 2, RowPtr: []int64{0, 1}, ColIdx: []int32{2}, Val: []float32{1}})
		}},
		{"UploadCSR row pointers", func() {
			dev.UploadCSR(&spmm.CSR{Rows: 2, Cols: 2, RowPtr: []int64{0, 1, 0}, ColIdx: []int32{0}, Val: []float32{1}})
		}},
		{"SpMM shapes", func() {
			a := dev.UploadCSR(&spmm.CSR{Rows: 4, Cols: 3, RowPtr: make([]int64, 5)})
			dev.SpMM(m44, a, m44)
		}},
		{"Gemm shapes", func() { dev.Gemm(spmm.NoTrans, spmm.Trans, 1, m44, m43, 0, m44) }},
	}
	cases = append(cases, gatPanics(dev, buf, m44, m43, verts)...)
	cases = append(cases, bf16Panics(dev, m44, m43)...)
	for _, c := range cases {
		func() {
			defer func() {
				r := recover()
				err, ok := r.(error)
				var se device.ShapeError
				if r == nil || !ok || !errors.As(err, &se) {
					t.Errorf("%s: recovered %v, want a device.ShapeError", c.name, r)
				}
			}()
			c.f()
		}()
	}
}

type panicCase struct {
	name string
	f    func()
}

// gatPanics are the misuses of the GAT operations: lengths that do not
// match the pattern or the heads, heads that do not divide the columns,
// a dropout probability of 1, vertices missing for attention dropout.
func gatPanics(dev device.Device, buf device.Buffer[float32], m44, m43 device.Mat, verts device.Buffer[int32]) []panicCase {
	// A 4×3 pattern with 5 entries; 2 heads: 10 per-edge values.
	a := dev.UploadCSR(&spmm.CSR{Rows: 4, Cols: 3, RowPtr: []int64{0, 2, 2, 3, 5}, ColIdx: []int32{0, 2, 1, 0, 1}, Val: make([]float32, 5)})
	e, e9, r8, r6, c6 := buf.Slice(0, 10), buf.Slice(0, 9), buf.Slice(10, 18), buf.Slice(10, 16), buf.Slice(20, 26)
	g := device.GAT{Heads: 2, Slope: 0.2}
	drop := device.GAT{Heads: 2, Slope: 0.2, P: 0.5, RowVerts: verts, ColVerts: verts.Slice(0, 3)}
	m48 := device.Matrix(buf.Slice(32, 64), 4, 8)
	m34 := device.Matrix(buf.Slice(40, 52), 3, 4)
	perm := upload(dev, []int32{0, 1, 2, 3})
	none := device.Buffer[int32]{}
	return []panicCase{
		{"HeadDot s length", func() { dev.HeadDot(r6, m44, buf.Slice(0, 4), 2) }},
		{"HeadDot att length", func() { dev.HeadDot(r8, m44, buf.Slice(0, 3), 2) }},
		{"HeadDot heads not dividing the columns", func() { dev.HeadDot(buf.Slice(0, 8), m43, buf.Slice(0, 3), 2) }},
		{"HeadDot no heads", func() { dev.HeadDot(buf.Slice(0, 0), m44, buf.Slice(0, 4), 0) }},
		{"HeadDotBackward ds length", func() { dev.HeadDotBackward(m44, r6, buf.Slice(0, 4), 2) }},
		{"HeadDotGrad datt length", func() { dev.HeadDotGrad(buf.Slice(0, 5), r8, m44, 2) }},
		{"GATScores e length", func() { dev.GATScores(e9, r8, a, r8, c6, g) }},
		{"GATScores t length", func() { dev.GATScores(e, r8, a, r8, r8, g) }},
		{"GATScores no heads", func() { dev.GATScores(e, r8, a, r8, c6, device.GAT{}) }},
		{"GATExpSum sums length", func() { dev.GATExpSum(e, r6, a, r8, g) }},
		{"GATNormalize alpha length", func() { dev.GATNormalize(e9, e, a, e, r8, g) }},
		{"GATNormalize p = 1", func() {
			dev.GATNormalize(e, e, a, e, r8, device.GAT{Heads: 2, P: 1, RowVerts: verts, ColVerts: verts.Slice(0, 3)})
		}},
		{"GATNormalize drop missing", func() { dev.GATNormalize(e, buf.Slice(0, 0), a, e, r8, drop) }},
		{"GATNormalize row vertices", func() {
			bad := drop
			bad.RowVerts = verts.Slice(0, 3)
			dev.GATNormalize(e, buf.Slice(30, 40), a, e, r8, bad)
		}},
		{"GATNormalize column vertices", func() {
			bad := drop
			bad.ColVerts = verts
			dev.GATNormalize(e, buf.Slice(30, 40), a, e, r8, bad)
		}},
		{"SpMMHeads shapes", func() { dev.SpMMHeads(m48, a, e, none, m48, 2) }},
		{"SpMMHeads heads not dividing the columns", func() { dev.SpMMHeads(m43, a, e, none, device.Matrix(buf.Slice(0, 9), 3, 3), 2) }},
		{"SpMMHeads alpha length", func() { dev.SpMMHeads(m44, a, e9, none, m34, 2) }},
		{"SpMMHeads perm length", func() { dev.SpMMHeads(m44, a, e, perm, m34, 2) }},
		{"SDDMMHeads shapes", func() { dev.SDDMMHeads(e, a, m44, m44, 2) }},
		{"SDDMMHeads d length", func() { dev.SDDMMHeads(e9, a, m44, m34, 2) }},
		{"GATRowDot dalpha length", func() { dev.GATRowDot(r8, e9, a, e, g) }},
		{"GATLogitGrad s length", func() { dev.GATLogitGrad(e, r8, a, e, e, r8, r6, c6, g) }},
		{"GATLogitGrad dz length", func() { dev.GATLogitGrad(e9, r8, a, e, e, r8, r8, c6, g) }},
		{"EdgeSums dst length", func() { dev.EdgeSums(r6, a, e, none, 2) }},
		{"EdgeSums perm length", func() { dev.EdgeSums(r8, a, e, perm, 2) }},
		{"EdgeSums no heads", func() { dev.EdgeSums(buf.Slice(0, 0), a, buf.Slice(0, 0), none, 0) }},
		{"ELU shapes", func() { dev.ELU(m44, m43) }},
		{"ELUBackward shapes", func() { dev.ELUBackward(m44, m44, m43) }},
		{"HeadMean widths", func() { dev.HeadMean(m43, m44, 1) }},
		{"HeadMean no heads", func() { dev.HeadMean(device.Matrix(buf.Slice(0, 0), 4, 0), m44, 0) }},
		{"HeadMeanBackward widths", func() { dev.HeadMeanBackward(m48, m43, 2) }},
	}
}
