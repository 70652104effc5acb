package devicetest

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
)

// testOptim checks every optimizer, with and without weight decay, bit for
// bit against gcn's float64 update over several steps, on lengths from 0
// to one the CPU device splits over its workers.
func testOptim(t *testing.T, dev device.Device) {
	for _, n := range []int{0, 1, 17, 100_003} {
		for kind, kname := range []string{"sgd", "adam", "adamw"} {
			for _, wd := range []float64{0, 5e-4} {
				r := newRand(uint64(500 + n))
				name := fmt.Sprintf("%s wd=%g n=%d", kname, wd, n)
				w, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
				for k := range w {
					w[k] = float32(r.NormFloat64())
				}
				wb, gb, mb, vb := upload(dev, w), device.Alloc[float32](dev, n), upload(dev, m), upload(dev, v)
				const lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
				for step := 1; step <= 3; step++ {
					for k := range g {
						g[k] = normal(r)
					}
					device.Upload(dev, gb, 0, g)
					c1, c2 := 1-math.Pow(b1, float64(step)), 1-math.Pow(b2, float64(step))
					dev.OptimStep(wb, gb, mb, vb, device.OptimStep{Kind: kind, LR: lr, WeightDecay: wd,
						Beta1: b1, Beta2: b2, Epsilon: eps, Corr1: c1, Corr2: c2})
					for k := range w {
						w2, m2, v2 := optimRef(kind, lr, wd, b1, b2, eps, c1, c2, float64(w[k]), float64(g[k]), float64(m[k]), float64(v[k]))
						w[k], m[k], v[k] = float32(w2), float32(m2), float32(v2)
					}
					exact(t, name+" w", download(dev, wb), w)
					exact(t, name+" m", download(dev, mb), m)
					exact(t, name+" v", download(dev, vb), v)
				}
			}
		}
	}
}

// testBF16 checks packing against spmm.ToBF16 (ties, subnormals,
// overflow to infinity, NaN) and unpacking as exact widening.
func testBF16(t *testing.T, dev device.Device) {
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 1.00390625, 1.01171875, 3.4e38, -3.4e38,
		1e-40, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		math.Float32frombits(0x7f800001), math.Float32frombits(0xffc00001), math.Float32frombits(0x3f808000)}
	r := newRand(600)
	for _, n := range []int{0, len(special), 100_000} {
		src := make([]float32, n)
		for k := range src {
			if k < len(special) {
				src[k] = special[k]
			} else {
				src[k] = math.Float32frombits(r.Uint32())
			}
		}
		sb := upload(dev, src)
		hb := device.Alloc[uint16](dev, n)
		dev.PackBF16(hb, sb)
		got := download(dev, hb)
		want := make([]uint16, n)
		collectives.EncodeBF16(want, src)
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("PackBF16(%g = %#x) = %#x, want %#x", src[k], math.Float32bits(src[k]), got[k], want[k])
			}
		}
		back := device.Alloc[float32](dev, n)
		dev.UnpackBF16(back, hb)
		wantBack := make([]float32, n)
		collectives.DecodeBF16(wantBack, want)
		exact(t, fmt.Sprintf("UnpackBF16 n=%d", n), download(dev, back), wantBack)
	}
}

// testGather checks row gathers and scatter-adds with repeated indices
// (summed in row order, so exact) and the 1-D gathers.
func testGather(t *testing.T, dev device.Device) {
	for n, s := range shapes {
		r := newRand(uint64(700 + n))
		name := fmt.Sprintf("%dx%d/pad%d", s.rows, s.cols, s.pad)
		srcRows := s.rows + 3
		src := newMat(dev, srcRows, s.cols, s.pad, r, normal)
		dst := newMat(dev, s.rows, s.cols, s.pad+1, r, normal)
		idx := make([]int32, s.rows)
		for i := range idx {
			idx[i] = r.Int32N(int32(srcRows))
		}
		ib := upload(dev, idx)
		dev.GatherRows(dst.m, src.m, ib)
		want := make([]float32, 0, len(dst.want))
		for _, k := range idx {
			want = append(want, src.want[int(k)*s.cols:(int(k)+1)*s.cols]...)
		}
		exact(t, "GatherRows "+name, dst.get(t, dev, "GatherRows"), want)

		// Scatter dst's rows back into src, duplicates summed in order.
		dst.want = want
		acc := append([]float32(nil), src.want...)
		for i, k := range idx {
			for j := range s.cols {
				acc[int(k)*s.cols+j] += dst.want[i*s.cols+j]
			}
		}
		dev.ScatterAddRows(src.m, dst.m, ib)
		exact(t, "ScatterAddRows "+name, src.get(t, dev, "ScatterAddRows"), acc)

		labels := make([]int32, srcRows)
		mask := make([]uint8, srcRows)
		for i := range labels {
			labels[i], mask[i] = r.Int32(), uint8(r.IntN(2))
		}
		lb, mb := device.Alloc[int32](dev, s.rows), device.Alloc[uint8](dev, s.rows)
		dev.GatherI32(lb, upload(dev, labels), ib)
		dev.GatherU8(mb, upload(dev, mask), ib)
		gl, gm := download(dev, lb), download(dev, mb)
		for i, k := range idx {
			if gl[i] != labels[k] || gm[i] != mask[k] {
				t.Fatalf("GatherI32/GatherU8 %s: row %d = (%d, %d), want (%d, %d)", name, i, gl[i], gm[i], labels[k], mask[k])
			}
		}
	}
}
