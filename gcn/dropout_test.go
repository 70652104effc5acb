package gcn

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDropoutThreadsAndMask checks the element-wise dropout pass on a block
// large enough to run on several goroutines: it must equal the serial pass
// and the reference's per-entry mask, including for zero inputs (which skip
// the draw) and a column offset (a block that starts mid-row).
func TestDropoutThreadsAndMask(t *testing.T) {
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
	serial := (&Model{Cfg: cfg, Options: Options{Threads: 1}}).dropout(src, verts, c0, width, true, 5, 2)
	threaded := (&Model{Cfg: cfg, Options: Options{Threads: 4}}).dropout(src, verts, c0, width, true, 5, 2)
	if !slices.Equal(serial, threaded) {
		t.Fatal("dropout on 4 goroutines differs from the serial pass")
	}
	kept := 0
	for i, v := range verts {
		for j := 0; j < width; j++ {
			want := float32(0)
			if dropKeep(cfg.Seed, 5, 2, v, c0+j, p) {
				want = src[i*width+j] * float32(1/(1-p))
				kept++
			}
			if got := serial[i*width+j]; got != want {
				t.Fatalf("entry (%d, %d): %v, want %v", i, j, got, want)
			}
		}
	}
	// The keep rate is 1-p within 5 standard deviations (sqrt(n p (1-p))/n ≈ 0.002).
	if rate := float64(kept) / (rows * width); rate < 1-p-0.01 || rate > 1-p+0.01 {
		t.Fatalf("keep rate %.4f, want %.2f ± 0.01", rate, 1-p)
	}
	if out := (&Model{Cfg: cfg}).dropout(src, verts, c0, width, false, 5, 2); &out[0] != &src[0] {
		t.Fatal("evaluation must not apply dropout")
	}
}

// TestDropoutKeepRecordsTheMask: the recording pass gives dropout's output
// bit for bit, and its mask, applied to another block (the backward pass's
// gradient), is the mask the reference draws — for widths that are not
// multiples of 64 and on one or several goroutines.
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
		for _, threads := range []int{1, 3} {
			m := &Model{Cfg: cfg, Options: Options{Threads: threads}}
			out, keep := m.dropoutKeep(src, verts, c0, width, true, 7, 1)
			if want := m.dropout(src, verts, c0, width, true, 7, 1); !slices.Equal(out, want) {
				t.Fatalf("width %d, %d threads: dropoutKeep's output differs from dropout's", width, threads)
			}
			back := m.applyKeep(grad, keep, width)
			for i, v := range verts {
				for j := 0; j < width; j++ {
					want := float32(0)
					if dropKeep(cfg.Seed, 7, 1, v, c0+j, p) {
						want = grad[i*width+j] * float32(1/(1-p))
					}
					if got := back[i*width+j]; got != want {
						t.Fatalf("width %d, %d threads: masked gradient (%d, %d) = %v, want %v", width, threads, i, j, got, want)
					}
				}
			}
		}
	}
	m := &Model{Cfg: Config{Dropout: p}}
	if out, keep := m.dropoutKeep([]float32{1}, []int32{0}, 0, 1, false, 0, 0); keep != nil || out[0] != 1 {
		t.Fatal("evaluation must not apply dropout nor record a mask")
	}
}
