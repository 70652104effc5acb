package neighbor

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/gcn"
)

// TestFullFanoutStepEqualsReference: with every fanout at least the
// maximum degree the MFGs hold whole neighbourhoods, so one step's loss,
// gradients and updated weights equal gcn's serial float64 model on the
// full graph with the step's global seeds as its training set (same
// initial weights, same dropout masks), on 1 rank and across ranks (where
// the features travel through the exchange and the gradients are
// averaged).
func TestFullFanoutStepEqualsReference(t *testing.T) {
	dg := testGraph(t, 120)
	hat := dataset.NormalizeGCN(dg.Adj)
	for _, tc := range []struct {
		layer         gcn.Layer
		layers, ranks int
		batch, step   int
		dropout       float64
	}{
		{gcn.GCNLayer, 2, 1, 24, 0, 0.5},
		{gcn.GCNLayer, 3, 3, 8, 2, 0.5},
		{gcn.SAGELayer, 2, 1, 24, 0, 0.5},
		{gcn.SAGELayer, 3, 4, 6, 5, 0.3},
		{gcn.GCNLayer, 2, 2, 10, 1, 0},
	} {
		t.Run(fmt.Sprintf("%v/L%d/G%d", tc.layer, tc.layers, tc.ranks), func(t *testing.T) {
			cfg := modelConfig(dg, tc.layer, tc.layers, tc.dropout)
			var mu sync.Mutex
			var global []int32
			losses := make([]float64, tc.ranks)
			grads := make([][][]float32, tc.ranks)
			weights := make([][][]float32, tc.ranks)
			errs := collectives.RunLocal(tc.ranks, func(c collectives.Comm) error {
				fan := make([]int, tc.layers)
				for l := range fan {
					fan[l] = maxDegree(dg)
				}
				rs := setupRank(t, c, dg, cfg, fan, tc.batch)
				b := rs.builder.NewBatch()
				if err := rs.builder.BuildInto(tc.step, b); err != nil {
					return err
				}
				mu.Lock()
				global = append(global, b.Seeds...)
				mu.Unlock()
				x, err := rs.trainer.Exch.Gather(&b.Plan, len(b.MFGs.Input()))
				if err != nil {
					return err
				}
				loss, err := rs.model.ForwardBackward(b, x)
				if err != nil {
					return err
				}
				if err := rs.model.AllReduceGrads(c); err != nil {
					return err
				}
				losses[c.Rank()] = loss
				for _, p := range rs.model.Params {
					g := make([]float32, p.Rows*p.Cols)
					downloadGrad(rs.model, p, g)
					grads[c.Rank()] = append(grads[c.Rank()], g)
				}
				rs.model.Step()
				for _, p := range rs.model.Params {
					w := make([]float32, p.Rows*p.Cols)
					downloadW(rs.model, p, w)
					weights[c.Rank()] = append(weights[c.Rank()], w)
				}
				return nil
			})
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			mask := make([]bool, dg.N)
			for _, v := range global {
				if mask[v] {
					t.Fatalf("seed %d twice in one global batch", v)
				}
				mask[v] = true
			}
			adj := hat
			if tc.layer == gcn.SAGELayer {
				adj = gcn.MeanAdjacency(hat)
			}
			ref := gcn.NewReference(cfg, gcn.DefaultOptimizer(), adj, dg.Features, dg.Labels, mask)
			want := ref.LossAndGrad(tc.step)
			loss := 0.0
			for _, l := range losses {
				loss += l / float64(tc.ranks)
			}
			if e := relErr(loss, want); e > 1e-5 {
				t.Errorf("loss %.9g, reference %.9g (rel %.2g)", loss, want, e)
			}
			for r := range tc.ranks {
				for k, p := range ref.Params {
					if e := maxRel(grads[r][k], p.G); e > 1e-5 {
						t.Errorf("rank %d: gradient of %s off by %.2g (relative to its largest entry)", r, p.Name, e)
					}
				}
			}
			ref.Step()
			for r := range tc.ranks {
				for k, p := range ref.Params {
					if e := maxRel(weights[r][k], p.W); e > 1e-5 {
						t.Errorf("rank %d: updated %s off by %.2g", r, p.Name, e)
					}
				}
			}
		})
	}
}

// maxRel is max|got−want| over max|want|.
func maxRel(got []float32, want []float64) float64 {
	d, s := 0.0, 0.0
	for i, w := range want {
		d = math.Max(d, math.Abs(float64(got[i])-w))
		s = math.Max(s, math.Abs(w))
	}
	return d / math.Max(s, 1e-12)
}

func maxDegree(g *dataset.Graph) int {
	d := 1
	for v := range g.N {
		d = max(d, int(g.Adj.RowPtr[v+1]-g.Adj.RowPtr[v]))
	}
	return d
}
