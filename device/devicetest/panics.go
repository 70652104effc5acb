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
	cases := []struct {
		name string
		f    func()
	}{
		{"Matrix past the buffer", func() { device.Matrix(buf, 9, 8) }},
		{"Upload past the buffer", func() { device.Upload(dev, buf, 60, make([]float32, 5)) }},
		{"Add shapes", func() { dev.Add(m44, m44, m43) }},
		{"Copy shapes", func() { dev.Copy(m43, m44) }},
		{"GatherRows index", func() { dev.GatherRows(m44, m44, idx) }},
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
