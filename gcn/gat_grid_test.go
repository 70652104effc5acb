package gcn

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/permute"
)

// gatGlobal is every parameter's gradient and the loss of one
// ForwardBackward, gathered from the blocks of all ranks.
type gatGlobal struct {
	loss  float64
	grads map[string][]float64
}

func gatRun(t *testing.T, shape grid.Shape, cfg Config, scheme permute.Scheme, steps int) gatGlobal {
	t.Helper()
	gr := RandomGraph(5, 37, 11, 5, 5)
	n := gr.Adj.Rows
	out := gatGlobal{grads: map[string][]float64{}}
	var mu sync.Mutex
	for r, err := range collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
		g, err := grid.New(w, shape)
		if err != nil {
			return err
		}
		perms := permute.New(n, scheme, 11)
		m, err := Build(g, device.NewNative(1), cfg, DefaultOptimizer(), gr, NewOrders(n, perms.P1, perms.P2), Options{})
		if err != nil {
			return err
		}
		var loss float64
		for s := range steps {
			if s > 0 {
				m.Step()
			}
			if loss, err = m.ForwardBackward(s); err != nil {
				return err
			}
		}
		mu.Lock()
		defer mu.Unlock()
		out.loss = loss
		for _, p := range m.Params {
			full := out.grads[p.Name]
			if full == nil {
				full = make([]float64, p.Rows*p.Cols)
				out.grads[p.Name] = full
			}
			gb := p.Grad()
			w := p.C1 - p.C0
			for i := p.R0; i < p.R1; i++ {
				for j := p.C0; j < p.C1; j++ {
					full[i*p.Cols+j] = float64(gb[(i-p.R0)*w+j-p.C0])
				}
			}
		}
		return nil
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return out
}

// gatTestConfigs are GAT models for the tests that run the 3D model:
// two layers with several heads in both, and three layers between an
// input projection and an output head (every GAT layer hidden).
var gatTestConfigs = map[string]Config{
	"gat":     {Features: 11, Hidden: 3, Classes: 5, Layers: 2, Heads: 3, OutputHeads: 2, Dropout: 0.5, Layer: GATLayer, Seed: 7},
	"gatfull": {Features: 11, Hidden: 4, Classes: 5, Layers: 3, Heads: 2, Dropout: 0.3, Layer: GATLayer, InputProjection: true, OutputHead: true, Seed: 8},
}

// TestGATGridsAgree: the loss and every gradient after two steps are the
// same on grids of 4 to 8 ranks (non-powers of two included) as on one
// rank, with and without double permutation.
func TestGATGridsAgree(t *testing.T) {
	cfgs := gatTestConfigs
	shapes := []grid.Shape{xyz(2, 2, 2), xyz(1, 2, 3), xyz(3, 1, 2), xyz(1, 1, 4), xyz(5, 1, 1)}
	for name, cfg := range cfgs {
		for _, scheme := range []permute.Scheme{permute.None, permute.Double} {
			want := gatRun(t, xyz(1, 1, 1), cfg, scheme, 2)
			for _, shape := range shapes {
				t.Run(fmt.Sprintf("%s/%v/%v", name, scheme, shape), func(t *testing.T) {
					got := gatRun(t, shape, cfg, scheme, 2)
					if math.Abs(got.loss-want.loss) > 1e-5 {
						t.Errorf("loss %v, want %v", got.loss, want.loss)
					}
					for k, w := range want.grads {
						scale := 0.0
						for _, v := range w {
							scale = math.Max(scale, math.Abs(v))
						}
						for i, v := range got.grads[k] {
							if math.Abs(v-w[i]) > 1e-4*scale+1e-7 {
								t.Errorf("%s[%d] = %v, want %v", k, i, v, w[i])
								break
							}
						}
					}
				})
			}
		}
	}
}
