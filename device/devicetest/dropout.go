package devicetest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"scalegnn/device"
)

func testDropout(t *testing.T, dev device.Device) {
	// The golden masks, drawn by gcn itself, through every recording op.
	for _, g := range goldenMasks {
		r := newRand(1)
		x := newMat(dev, 1, 128, 0, r, positive)
		dst := newMat(dev, 1, 128, 0, r, nil)
		keep := device.Alloc[uint64](dev, 2)
		spec := device.Dropout{Seed: g.seed, Step: g.step, Site: g.site, P: g.p, Col0: g.c0,
			Verts: upload(dev, []int32{g.vertex})}
		dev.DropoutRecord(dst.m, x.m, keep, spec)
		if got := download(dev, keep); got[0] != g.bits[0] || got[1] != g.bits[1] {
			t.Errorf("golden mask %+v: bits %#x, want %#x", g, got, g.bits)
		}
		for j := range 128 {
			if dropKeep(g.seed, g.step, g.site, g.vertex, g.c0+j, g.p) != (g.bits[j/64]>>(j%64)&1 == 1) {
				t.Fatalf("the suite's reference dropKeep disagrees with gcn's golden mask %+v at column %d", g, j)
			}
		}
	}

	// Dense activations and sparse rows (bag-of-words features, which a
	// device may handle by skipping the zeros' draws).
	sparse := func(r *rand.Rand) float32 {
		if r.IntN(10) > 0 {
			return 0
		}
		return normal(r)
	}
	for n, s := range shapes {
		for _, c := range []struct {
			p   float64
			gen func(*rand.Rand) float32
		}{{0, normal}, {0.5, normal}, {0.9, normal}, {0.5, sparse}} {
			p := c.p
			r := newRand(uint64(100 + n))
			name := fmt.Sprintf("%dx%d/pad%d p=%g", s.rows, s.cols, s.pad, p)
			x := newMat(dev, s.rows, s.cols, s.pad, r, c.gen)
			dst := newMat(dev, s.rows, s.cols, s.pad+1, r, nil)
			verts := make([]int32, s.rows)
			for i := range verts {
				verts[i] = r.Int32N(1 << 20)
			}
			spec := device.Dropout{Seed: 99, Step: 7, Site: 2, P: p, Col0: r.IntN(200), Verts: upload(dev, verts)}
			wpr := (s.cols + 63) / 64
			scale := float64(float32(1 / (1 - p)))
			kept := func(i, j int) bool { return dropKeep(99, 7, 2, verts[i], spec.Col0+j, p) }
			ref := func(relu, skipZeros bool) ([]float32, []uint64) {
				out := make([]float32, len(x.want))
				bits := make([]uint64, s.rows*wpr)
				for i := range s.rows {
					for j := range s.cols {
						v := float64(x.want[i*s.cols+j])
						if relu {
							v = max(v, 0)
						}
						k := kept(i, j)
						if k {
							bits[i*wpr+j/64] |= 1 << (j % 64)
						}
						switch {
						case skipZeros && v == 0:
							out[i*s.cols+j] = 0
						case k:
							out[i*s.cols+j] = float32(v * scale)
						default:
							out[i*s.cols+j] = float32(v * 0)
						}
					}
				}
				return out, bits
			}

			dev.Dropout(dst.m, x.m, spec)
			want, bits := ref(false, true)
			exact(t, "Dropout "+name, dst.get(t, dev, "Dropout"), want)
			// In place, as gcn drops its widened bfloat16 features.
			dev.Copy(dst.m, x.m)
			dev.Dropout(dst.m, dst.m, spec)
			exact(t, "Dropout in place "+name, dst.get(t, dev, "Dropout in place"), want)

			keep := device.Alloc[uint64](dev, s.rows*wpr)
			dev.Fill(dst.m, 7)
			dev.DropoutRecord(dst.m, x.m, keep, spec)
			want, _ = ref(false, false)
			exact(t, "DropoutRecord "+name, dst.get(t, dev, "DropoutRecord"), want)
			checkBits(t, "DropoutRecord "+name, download(dev, keep), bits)

			// ApplyMask with the recorded bits reproduces DropoutRecord.
			dev.Fill(dst.m, 7)
			dev.ApplyMask(dst.m, x.m, keep, p)
			exact(t, "ApplyMask "+name, dst.get(t, dev, "ApplyMask"), want)
			// And in place, as the backward pass applies it to its own
			// gradients.
			dev.Copy(dst.m, x.m)
			dev.ApplyMask(dst.m, dst.m, keep, p)
			exact(t, "ApplyMask in place "+name, dst.get(t, dev, "ApplyMask in place"), want)

			fillOnes(dev, keep)
			dev.ReLUDropoutRecord(dst.m, x.m, keep, spec)
			want, _ = ref(true, false)
			exact(t, "ReLUDropoutRecord "+name, dst.get(t, dev, "ReLUDropoutRecord"), want)
			checkBits(t, "ReLUDropoutRecord "+name, download(dev, keep), bits)

			// In place, as the model applies dropout to its own buffers.
			dev.DropoutRecord(x.m, x.m, keep, spec)
			want, _ = ref(false, false)
			exact(t, "DropoutRecord in place "+name, x.get(t, dev, "DropoutRecord in place"), want)
		}
	}
}

// fillOnes sets every bit of b, so that a kernel that ORs into stale
// words instead of overwriting them fails.
func fillOnes(dev device.Device, b device.Buffer[uint64]) {
	v := make([]uint64, b.Len())
	for k := range v {
		v[k] = ^uint64(0)
	}
	device.Upload(dev, b, 0, v)
}

func checkBits(t *testing.T, name string, got, want []uint64) {
	t.Helper()
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("%s: mask word %d = %#x, want %#x", name, k, got[k], want[k])
			return
		}
	}
}
