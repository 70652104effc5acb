package devicetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"scalegnn/device"
	"scalegnn/spmm"
)

// reluSpecial draws mostly normals, and the values a ReLU's select must
// get right: ±0, NaN, ±Inf.
func reluSpecial(r *rand.Rand) float32 {
	switch r.IntN(12) {
	case 0:
		return float32(math.Copysign(0, -1))
	case 1:
		return 0
	case 2:
		return float32(math.NaN())
	case 3:
		return float32(math.Inf(1 - 2*r.IntN(2)))
	}
	return normal(r)
}

// testReLUBits checks ReLURecord and ReLUBackwardBits against ReLU and
// ReLUBackward on the same operands, bit for bit, out of place and in
// place, and the recorded positions (over stale words) against the
// definition: bit j of row i's ⌈cols/64⌉ words is set where the output is
// > 0.
func testReLUBits(t *testing.T, dev device.Device) {
	for n, s := range shapes {
		r := newRand(uint64(500 + n))
		name := fmt.Sprintf("%dx%d/pad%d", s.rows, s.cols, s.pad)
		a := newMat(dev, s.rows, s.cols, s.pad, r, reluSpecial)
		g := newMat(dev, s.rows, s.cols, s.pad+1, r, reluSpecial)
		dst := newMat(dev, s.rows, s.cols, s.pad+2, r, normal)
		ref := newMat(dev, s.rows, s.cols, 0, r, normal)
		wpr := (s.cols + 63) / 64
		stale := make([]uint64, s.rows*wpr)
		for k := range stale {
			stale[k] = r.Uint64()
		}
		pos := upload(dev, stale)

		dev.ReLU(ref.m, a.m)
		wantAct := ref.get(t, dev, "ReLU")
		dev.ReLURecord(dst.m, a.m, pos)
		exact(t, "ReLURecord "+name, dst.get(t, dev, "ReLURecord"), wantAct)
		got := download(dev, pos)
		for i := range s.rows {
			for j := range s.cols {
				bit := got[i*wpr+j/64]>>(j%64)&1 != 0
				if want := wantAct[i*s.cols+j] > 0; bit != want {
					t.Fatalf("ReLURecord %s: bit (%d, %d) is %v for output %v", name, i, j, bit, wantAct[i*s.cols+j])
				}
			}
			if rest := s.cols % 64; rest != 0 && got[i*wpr+wpr-1]>>rest != 0 {
				t.Fatalf("ReLURecord %s: row %d has bits past column %d: %#x", name, i, s.cols, got[i*wpr+wpr-1])
			}
		}

		dev.ReLUBackward(ref.m, g.m, a.m)
		wantGrad := ref.get(t, dev, "ReLUBackward")
		dev.ReLUBackwardBits(dst.m, g.m, pos)
		exact(t, "ReLUBackwardBits "+name, dst.get(t, dev, "ReLUBackwardBits"), wantGrad)

		// In place, as gcn runs them: the forward on Z, the backward on
		// the incoming gradient.
		dev.ReLURecord(a.m, a.m, pos)
		exact(t, "ReLURecord in place "+name, a.get(t, dev, "ReLURecord in place"), wantAct)

		// bfloat16: the select on a rounded gradient is the rounded
		// select, out of place and in place (gcn masks dF̃ in place).
		gh := newBF16(dev, s.rows, s.cols, s.pad+3, r, nil)
		dev.PackMatBF16(gh.m, g.m)
		dh := newBF16(dev, s.rows, s.cols, s.pad+1, r, reluSpecial)
		dev.ReLUBackwardBitsBF16(dh.m, gh.m, pos)
		wantH := make([]uint16, len(wantGrad))
		for k, v := range wantGrad {
			wantH[k] = spmm.ToBF16(v)
		}
		exactBF16(t, "ReLUBackwardBitsBF16 "+name, dh.get(t, dev, "ReLUBackwardBitsBF16"), wantH)
		dev.ReLUBackwardBitsBF16(gh.m, gh.m, pos)
		exactBF16(t, "ReLUBackwardBitsBF16 in place "+name, gh.get(t, dev, "ReLUBackwardBitsBF16 in place"), wantH)

		dev.ReLUBackwardBits(g.m, g.m, pos)
		exact(t, "ReLUBackwardBits in place "+name, g.get(t, dev, "ReLUBackwardBits in place"), wantGrad)
	}
}

// exactBF16 fails t unless got and want hold the same bfloat16 bits.
func exactBF16(t *testing.T, name string, got, want []uint16) {
	t.Helper()
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("%s: element %d = %#x, want %#x", name, k, got[k], want[k])
		}
	}
}
