package devicetest

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/device"
)

// testRMSNorm checks the split RMSNorm forward and backward against gcn's
// float32 loops bit for bit and against float64 within 1e-5 relative.
func testRMSNorm(t *testing.T, dev device.Device) {
	const eps = 1e-6
	for n, s := range shapes {
		r := newRand(uint64(200 + n))
		name := fmt.Sprintf("%dx%d/pad%d", s.rows, s.cols, s.pad)
		z := newMat(dev, s.rows, s.cols, s.pad, r, normal)
		w := make([]float32, s.cols)
		for j := range w {
			w[j] = float32(0.5 + r.Float64())
		}
		wb := upload(dev, w)
		ss := device.Alloc[float32](dev, s.rows)
		rms := device.Alloc[float32](dev, s.rows)
		u := newMat(dev, s.rows, s.cols, s.pad+1, r, nil)
		out := newMat(dev, s.rows, s.cols, s.pad+2, r, nil)
		norm := device.RMSNorm{N: max(s.cols, 1), Eps: eps}

		dev.SumSquares(ss, z.m)
		dev.RMSNormApply(out.m, u.m, rms, z.m, ss, wb, norm, false)
		wantOut, wantU, wantRMS := gcnRMSNorm(z.want, s.rows, s.cols, norm.N, eps, w)
		gotOut := out.get(t, dev, "RMSNormApply")
		exact(t, "RMSNormApply out "+name, gotOut, wantOut)
		exact(t, "RMSNormApply u "+name, u.get(t, dev, "RMSNormApply u"), wantU)
		exact(t, "RMSNormApply rms "+name, download(dev, rms), wantRMS)
		// float64 definition.
		ref := make([]float64, len(z.want))
		for i := range s.rows {
			var sum float64
			for j := range s.cols {
				sum += float64(z.want[i*s.cols+j]) * float64(z.want[i*s.cols+j])
			}
			rr := math.Sqrt(sum/float64(norm.N) + eps)
			for j := range s.cols {
				ref[i*s.cols+j] = float64(z.want[i*s.cols+j]) / rr * float64(w[j])
			}
		}
		near(t, "RMSNormApply vs float64 "+name, gotOut, ref, 1e-5, 1e-6)

		// Fused with the ReLU.
		dev.RMSNormApply(out.m, u.m, rms, z.m, ss, wb, norm, true)
		for k := range wantOut {
			wantOut[k] = max(wantOut[k], 0)
		}
		exact(t, "RMSNormApply+ReLU "+name, out.get(t, dev, "RMSNormApply+ReLU"), wantOut)

		// Backward.
		da := newMat(dev, s.rows, s.cols, s.pad, r, normal)
		g := upload(dev, make([]float32, s.cols))
		fillNaN(dev, g)
		dot := device.Alloc[float32](dev, s.rows)
		dz := newMat(dev, s.rows, s.cols, s.pad+3, r, nil)
		dev.RMSNormBackwardLocal(g, dot, da.m, u.m, wb)
		dev.RMSNormBackwardFinish(dz.m, da.m, u.m, wb, dot, rms, norm)
		wantDZ, wantG := gcnRMSNormBackward(da.want, wantU, wantRMS, s.rows, s.cols, norm.N, w)
		gotDZ := dz.get(t, dev, "RMSNormBackwardFinish")
		exact(t, "RMSNormBackward dz "+name, gotDZ, wantDZ)
		exact(t, "RMSNormBackward gScale "+name, download(dev, g), wantG)
		// float64: dz = (da·w − u·Σ(da·w·u)/n)/rms.
		for i := range s.rows {
			var dt float64
			for j := range s.cols {
				k := i*s.cols + j
				dt += float64(da.want[k]) * float64(w[j]) * float64(wantU[k])
			}
			for j := range s.cols {
				k := i*s.cols + j
				ref[k] = (float64(da.want[k])*float64(w[j]) - float64(wantU[k])*dt/float64(norm.N)) / float64(wantRMS[i])
			}
		}
		near(t, "RMSNormBackward vs float64 "+name, gotDZ, ref, 1e-4, 1e-4)
	}
}

// fillNaN poisons an output buffer that an operation must overwrite.
func fillNaN(dev device.Device, b device.Buffer[float32]) {
	v := make([]float32, b.Len())
	for k := range v {
		v[k] = float32(math.NaN())
	}
	device.Upload(dev, b, 0, v)
}
