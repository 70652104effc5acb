package gcn

import (
	"fmt"
	"scalegnn/device"
	"testing"

	"scalegnn/collectives"
	"scalegnn/grid"
	"scalegnn/permute"
)

// optionRun is what one rank saw in a run with given Options.
type optionRun struct {
	losses   []float64
	params   [][]float32 // weights after the run, then gradients, per param
	pmm      int64
	counters int64 // bytes over the X, Y and Z communicators
}

func runWithOptions(t *testing.T, p *testProblem, cfg Config, shape grid.Shape, opts Options, steps int) []optionRun {
	t.Helper()
	perms := permute.New(p.n, permute.Double, 2)
	orders := NewOrders(p.n, perms.P1, perms.P2)
	out := make([]optionRun, shape.Ranks())
	runLocal(t, shape.Ranks(), func(w collectives.Comm) error {
		g, err := grid.New(w, shape)
		if err != nil {
			return err
		}
		m, err := Build(g, device.NewNative(1), cfg, DefaultOptimizer(), p.g, orders, opts)
		if err != nil {
			return err
		}
		var r optionRun
		for s := 0; s < steps; s++ {
			l, err := m.TrainStep(s)
			if err != nil {
				return err
			}
			r.losses = append(r.losses, l)
		}
		for _, prm := range m.Params {
			r.params = append(r.params, append(prm.Weights(), prm.Grad()...))
		}
		r.pmm = m.PMMBytes
		for _, c := range []collectives.Comm{g.XComm, g.YComm, g.ZComm} {
			r.counters += c.Counters().TotalBytes()
		}
		out[w.Rank()] = r
		return nil
	})
	return out
}

// TestOverlapChangesNothing: issuing the backward all-reduces nonblocking
// must give the same numbers bit for bit (Local reduces in rank order
// either way), with float32 and with bfloat16 communication.
func TestOverlapChangesNothing(t *testing.T) {
	p := newProblem(31, 43, 11, 5, 5)
	for _, name := range []string{"kipf", "scalegnn", "headonly"} {
		for _, shape := range []grid.Shape{xyz(2, 2, 2), xyz(1, 2, 3), xyz(3, 1, 2)} {
			for _, bf16 := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%v/bf16=%v", name, shape, bf16), func(t *testing.T) {
					a := runWithOptions(t, p, testConfigs[name], shape, Options{BF16: bf16}, 3)
					b := runWithOptions(t, p, testConfigs[name], shape, Options{BF16: bf16, Overlap: true}, 3)
					for r := range a {
						for s := range a[r].losses {
							if a[r].losses[s] != b[r].losses[s] {
								t.Fatalf("rank %d step %d: loss %v without overlap, %v with", r, s, a[r].losses[s], b[r].losses[s])
							}
						}
						for i := range a[r].params {
							for k := range a[r].params[i] {
								if a[r].params[i][k] != b[r].params[i][k] {
									t.Fatalf("rank %d parameter %d entry %d differs", r, i, k)
								}
							}
						}
						if a[r].counters != b[r].counters {
							t.Fatalf("rank %d: %d bytes without overlap, %d with", r, a[r].counters, b[r].counters)
						}
					}
				})
			}
		}
	}
}

// TestBF16HalvesPMMTrafficAndStaysClose: bfloat16 communication halves the
// bytes of the 3D-PMM all-reduces, leaves every other collective's bytes
// as they were (the counters of the X, Y and Z communicators drop by
// exactly half the float32 PMM bytes), and trains close to float32: the
// loss agrees to 1e-2 relative (bfloat16 keeps 8 significant bits, a
// relative rounding error of 2⁻⁹ per value, over a few rounded sums).
func TestBF16HalvesPMMTrafficAndStaysClose(t *testing.T) {
	p := newProblem(32, 43, 11, 5, 5)
	for _, name := range []string{"kipf", "scalegnn"} {
		for _, shape := range []grid.Shape{xyz(2, 2, 2), xyz(1, 2, 3), xyz(1, 1, 1)} {
			t.Run(fmt.Sprintf("%s/%v", name, shape), func(t *testing.T) {
				f32 := runWithOptions(t, p, testConfigs[name], shape, Options{}, 3)
				bf := runWithOptions(t, p, testConfigs[name], shape, Options{BF16: true}, 3)
				for r := range f32 {
					if bf[r].pmm*2 != f32[r].pmm {
						t.Errorf("rank %d: PMM bytes %d with bf16, %d with float32", r, bf[r].pmm, f32[r].pmm)
					}
					if f32[r].counters-bf[r].counters != f32[r].pmm/2 {
						t.Errorf("rank %d: communicator bytes %d with float32, %d with bf16; want a drop of %d",
							r, f32[r].counters, bf[r].counters, f32[r].pmm/2)
					}
					if shape.Ranks() > 1 && f32[r].pmm == 0 {
						t.Errorf("rank %d: no PMM bytes counted", r)
					}
					for s := range f32[r].losses {
						if d := f32[r].losses[s] - bf[r].losses[s]; d > 1e-2*f32[r].losses[s] || -d > 1e-2*f32[r].losses[s] {
							t.Errorf("rank %d step %d: loss %v with float32, %v with bf16", r, s, f32[r].losses[s], bf[r].losses[s])
						}
					}
				}
			})
		}
	}
}
