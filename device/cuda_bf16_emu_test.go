//go:build cgo

package device

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"testing"

	"scalegnn/spmm"
)

// TestCUDABF16Emulated runs the CUDA device's bfloat16 kernels without a
// GPU, as TestCUDAGATEmulated does: PackMatBF16 and UnpackMatBF16 on
// contiguous views (the flat kernels) and strided ones (the view
// kernels), ReLUBackwardBitsBF16 out of place and in place,
// GatherRowsBF16, and the two
// bfloat16 SpMMs of a matrix without nonzeros (the
// fills; cuSPARSE is not called). The results must be Native's bit for
// bit, and nothing outside the views may change. The library products
// themselves (cuSPARSE, cuBLAS) need a GPU: TestCUDA runs them.
func TestCUDABF16Emulated(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	dir := t.TempDir()
	emu := buildEmulator(t, gxx, dir)
	host := NewNative(1)
	for n, c := range []struct{ rows, cols, padS, padD int }{
		{1, 1, 0, 0}, {5, 17, 0, 0}, {7, 33, 2, 1}, {40, 64, 0, 3}, {3, 130, 1, 0},
	} {
		t.Run(fmt.Sprintf("%dx%d pads %d,%d", c.rows, c.cols, c.padS, c.padD), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(n), 28))
			v := make([]float32, c.rows*c.cols)
			for k := range v {
				v[k] = float32(r.NormFloat64())
				switch {
				case k < len(bf16Edges):
					v[k] = math.Float32frombits(bf16Edges[k])
				case r.IntN(4) == 0:
					v[k] = math.Float32frombits(r.Uint32()) // NaNs, infinities, subnormals
				}
			}
			e := newEmu()
			es, hs := emuMat(e, host, v, c.rows, c.cols, c.padS)
			eh, hh := emuMatBF16(e, host, c.rows, c.cols, c.padD)
			e.d.PackMatBF16(eh, es)
			host.PackMatBF16(hh, hs)
			eb, hb := emuMat(e, host, make([]float32, len(v)), c.rows, c.cols, c.padD+1)
			e.d.UnpackMatBF16(eb, eh)
			host.UnpackMatBF16(hb, hh)
			// A product with no nonzeros: zeros in both kinds of dst.
			a := &spmm.CSR{Rows: c.rows, Cols: 2, RowPtr: make([]int64, c.rows+1)}
			ea, ha := emuCSR(e, a), host.UploadCSR(a)
			e2, h2 := emuMatBF16(e, host, 2, c.cols, 0)
			ez, hz := emuMat(e, host, v, c.rows, c.cols, c.padS)
			e.d.SpMMBF16(ez, ea, e2)
			host.SpMMBF16(hz, ha, h2)
			ezh, hzh := emuMatBF16(e, host, c.rows, c.cols, c.padD)
			e.d.PackMatBF16(ezh, es) // not zero before the product
			host.PackMatBF16(hzh, hs)
			e.d.SpMMBF16ToBF16(ezh, ea, e2)
			host.SpMMBF16ToBF16(hzh, ha, h2)
			// The bfloat16 ReLU gradient on the packed values, out of
			// place and in place, with random positions.
			words := make([]uint64, c.rows*maskWords(c.cols))
			for k := range words {
				words[k] = r.Uint64()
			}
			ep, hp := emuAlloc(e, words), Alloc[uint64](host, len(words))
			Upload(host, hp, 0, words)
			erb, hrb := emuMatBF16(e, host, c.rows, c.cols, c.padD+2)
			e.d.ReLUBackwardBitsBF16(erb, eh, ep)
			host.ReLUBackwardBitsBF16(hrb, hh, hp)
			ein, hin := emuMatBF16(e, host, c.rows, c.cols, c.padD)
			e.d.PackMatBF16(ein, es)
			host.PackMatBF16(hin, hs)
			e.d.ReLUBackwardBitsBF16(ein, ein, ep)
			host.ReLUBackwardBitsBF16(hin, hin, hp)
			// Rows of the packed values gathered, repeats included.
			idx := make([]int32, c.rows+2)
			for k := range idx {
				idx[k] = r.Int32N(int32(c.rows))
			}
			ei, hi := emuAlloc(e, idx), Alloc[int32](host, len(idx))
			ei.shadow = idx // checkIndices reads them there (no GPU to download from)
			Upload(host, hi, 0, idx)
			eg, hg := emuMatBF16(e, host, len(idx), c.cols, c.padD+1)
			e.d.GatherRowsBF16(eg, eh, ei)
			host.GatherRowsBF16(hg, hh, hi)
			e.run(t, emu, dir)

			checkULP(t, "UnpackMatBF16", emuMatRead(e, eb), hostMatRead(hb), 0)
			checkULP(t, "SpMMBF16 without nonzeros", emuMatRead(e, ez), hostMatRead(hz), 0)
			for _, p := range []struct {
				name string
				e, h MatBF16
			}{{"PackMatBF16", eh, hh}, {"SpMMBF16ToBF16 without nonzeros", ezh, hzh},
				{"ReLUBackwardBitsBF16", erb, hrb}, {"ReLUBackwardBitsBF16 in place", ein, hin}, {"GatherRowsBF16", eg, hg}} {
				all := emuRead(e, p.e.buf)
				for i := range p.e.rows {
					for j := range p.e.cols {
						if g, w := all[p.e.off+i*p.e.strid+j], p.h.row(i)[j]; g != w {
							t.Fatalf("%s: element (%d, %d) = %#x, Native %#x", p.name, i, j, g, w)
						}
					}
				}
				for k, h := range all {
					o := k - p.e.off
					if (o < 0 || o/p.e.strid >= p.e.rows || o%p.e.strid >= p.e.cols) && h != 0 {
						t.Fatalf("%s: element %d outside the view was written", p.name, k)
					}
				}
			}
		})
	}
}

// bf16Edges are float32 bits where a rounding to bfloat16 goes wrong
// first: ties to even (up and down), the largest finite values, a
// subnormal tie, a NaN with its payload in the dropped bits.
var bf16Edges = []uint32{0x3f808000, 0x3f818000, 0xbf808000, 0x7f7fffff, 0x00018000, 0x7f800001, 0xffc00001}

// emuMatBF16 is a zeroed rows×cols bfloat16 view with pad elements after
// each row, in the arena and on the host device.
func emuMatBF16(e *emuDevice, host Device, rows, cols, pad int) (MatBF16, MatBF16) {
	whole := make([]uint16, rows*(cols+pad)+1)
	return MatrixStrideBF16(emuAlloc(e, whole), rows, cols, cols+pad), MatrixStrideBF16(Alloc[uint16](host, len(whole)), rows, cols, cols+pad)
}
