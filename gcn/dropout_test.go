package gcn

import (
	"math/rand/v2"
	"slices"
	"testing"

	"scalegnn/device"
)

// TestDropoutMask checks the dropout pass on every test device on a block
// large enough to run on several threads: it must give the reference's
// per-entry mask, including for zero inputs (which skip the draw) and a
// column offset (a block that starts mid-row).
func TestDropoutMask(t *testing.T) {
	const rows, width, c0, p = 300, 200, 17, 0.4
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, rows*width)
	for i := range src {
		if rng.IntN(3) > 0 {
			src[i] = float32(rng.NormFloat64())
		}
	}
	verts := make([]int32, rows)
	for i := range verts {
		verts[i] = int32(rng.IntN(100000))
	}
	cfg := Config{Dropout: p, Seed: 9}
	for _, newDev := range testDevices {
		dev := newDev()
		m := testModel(cfg, dev)
		x := upload(dev, src, rows, width)
		got := download(dev, m.dropout(x, device.Share(dev, verts), c0, true, 5, 2))
		kept := 0
		for i, v := range verts {
			for j := 0; j < width; j++ {
				want := float32(0)
				if dropKeep(cfg.Seed, 5, 2, v, c0+j, p) {
					want = src[i*width+j] * float32(1/(1-p))
					kept++
				}
				if g := got[i*width+j]; g != want {
					t.Fatalf("%s: entry (%d, %d): %v, want %v", dev.Name(), i, j, g, want)
				}
			}
		}
		// The keep rate is 1-p within 5 standard deviations (sqrt(n p (1-p))/n ≈ 0.002).
		if rate := float64(kept) / (rows * width); rate < 1-p-0.01 || rate > 1-p+0.01 {
			t.Fatalf("keep rate %.4f, want %.2f ± 0.01", rate, 1-p)
		}
		if out := m.dropout(x, device.Share(dev, verts), c0, false, 5, 2); !slices.Equal(download(dev, out), src) {
			t.Fatal("evaluation must not apply dropout")
		}
	}
}

// TestDropoutKeepRecordsTheMask: the recording pass gives dropout's output
// bit for bit, and its mask, applied to another block (the backward pass's
// gradient), is the mask the reference draws — for widths that are not
// multiples of 64, on every test device.
func TestDropoutKeepRecordsTheMask(t *testing.T) {
	const rows, c0, p = 257, 5, 0.3
	rng := rand.New(rand.NewPCG(3, 4))
	for _, width := range []int{1, 63, 64, 70, 130} {
		src := make([]float32, rows*width)
		grad := make([]float32, rows*width)
		for i := range src {
			if rng.IntN(2) > 0 {
				src[i] = float32(rng.NormFloat64())
			}
			grad[i] = float32(rng.NormFloat64())
		}
		verts := make([]int32, rows)
		for i := range verts {
			verts[i] = int32(rng.IntN(100000))
		}
		cfg := Config{Dropout: p, Seed: 11}
		for _, newDev := range testDevices {
			dev := newDev()
			m := testModel(cfg, dev)
			x, vb := upload(dev, src, rows, width), device.Share(dev, verts)
			out, keep := m.dropoutKeep(x, vb, c0, true, 7, 1)
			if want := download(dev, m.dropout(x, vb, c0, true, 7, 1)); !slices.Equal(download(dev, out), want) {
				t.Fatalf("width %d, %s: dropoutKeep's output differs from dropout's", width, dev.Name())
			}
			back := download(dev, m.applyKeep(upload(dev, grad, rows, width), keep))
			for i, v := range verts {
				for j := 0; j < width; j++ {
					want := float32(0)
					if dropKeep(cfg.Seed, 7, 1, v, c0+j, p) {
						want = grad[i*width+j] * float32(1/(1-p))
					}
					if got := back[i*width+j]; got != want {
						t.Fatalf("width %d, %s: masked gradient (%d, %d) = %v, want %v", width, dev.Name(), i, j, got, want)
					}
				}
			}
		}
	}
	dev := device.NewNative(1)
	m := testModel(Config{Dropout: p}, dev)
	one := upload(dev, []float32{1}, 1, 1)
	if out, keep := m.dropoutKeep(one, device.Share(dev, []int32{0}), 0, false, 0, 0); keep.ok || download(dev, out)[0] != 1 {
		t.Fatal("evaluation must not apply dropout nor record a mask")
	}
}
