package gcn

import (
	"fmt"
	"slices"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// subgraph is the subgraph of g induced by the vertices ids, in ids'
// order: what an isolated worker reads from a prepared dataset's blocks.
func subgraph(g *Graph, ids []int32, f int) *Graph {
	local := map[int32]int32{}
	for i, v := range ids {
		local[v] = int32(i)
	}
	n := len(ids)
	sub := &Graph{Adj: &spmm.CSR{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}, Classes: g.Classes,
		Labels: make([]int32, n), Train: make([]bool, n), Val: make([]bool, n), Test: make([]bool, n)}
	for i, v := range ids {
		type entry struct {
			c int32
			w float32
		}
		var row []entry
		for k := g.Adj.RowPtr[v]; k < g.Adj.RowPtr[v+1]; k++ {
			if j, ok := local[g.Adj.ColIdx[k]]; ok {
				row = append(row, entry{j, g.Adj.Val[k]})
			}
		}
		slices.SortFunc(row, func(a, b entry) int { return int(a.c - b.c) })
		for _, e := range row {
			sub.Adj.ColIdx, sub.Adj.Val = append(sub.Adj.ColIdx, e.c), append(sub.Adj.Val, e.w)
		}
		sub.Adj.RowPtr[i+1] = int64(len(sub.Adj.ColIdx))
		sub.Features = append(sub.Features, g.Features[int(v)*f:int(v+1)*f]...)
		sub.Labels[i], sub.Train[i], sub.Val[i], sub.Test[i] = g.Labels[v], g.Train[v], g.Val[v], g.Test[v]
	}
	return sub
}

// TestSubgraphShardsAreTheBatch: training on NewSubgraphShards of two
// runs of positions (a partition's two chunks) is training on the batch a
// BatchBuilder cuts from the whole graph's shards for the same vertices,
// bit for bit, for GCN, SAGE and GAT models with and without extras.
func TestSubgraphShardsAreTheBatch(t *testing.T) {
	p := newProblem(31, 47, 11, 5, 6)
	p.g.Classes = 5
	cfgs := map[string]Config{"kipf": testConfigs["kipf"], "scalegnn": testConfigs["scalegnn"], "sagefull": testConfigs["sagefull"],
		"gat": gatTestConfigs["gat"], "gatfull": gatTestConfigs["gatfull"]}
	for name, cfg := range cfgs {
		for _, runs := range [][2][2]int{{{0, 12}, {30, 47}}, {{5, 20}, {20, 33}}} {
			t.Run(fmt.Sprintf("%s/%v", name, runs), func(t *testing.T) {
				perms := permute.New(p.n, permute.Single, 3)
				orders := NewOrders(p.n, perms.P1, perms.P1)
				var pos, ids []int32
				for _, r := range runs {
					for i := r[0]; i < r[1]; i++ {
						pos = append(pos, int32(i))
						ids = append(ids, orders.Order[0][i])
					}
				}
				sorted := slices.Clone(ids)
				slices.Sort(sorted)
				runLocal(t, 1, func(w collectives.Comm) error {
					g, err := grid.New(w, xyz(1, 1, 1))
					if err != nil {
						return err
					}
					whole, err := Build(g, device.NewNative(1), cfg, DefaultOptimizer(), p.g, orders, Options{})
					if err != nil {
						return err
					}
					bb, err := NewBatchBuilder(g, cfg, whole.Shards(), 1, len(ids))
					if err != nil {
						return err
					}
					bb.Vertices = func(int) []int32 { return sorted }
					sh, err := NewSubgraphShards(g, cfg, orders, pos, subgraph(p.g, ids, p.f))
					if err != nil {
						return err
					}
					part, err := NewModel(g, device.NewNative(1), cfg, DefaultOptimizer(), sh, Options{})
					if err != nil {
						return err
					}
					for step := range 3 {
						b, err := bb.Build(step)
						if err != nil {
							return err
						}
						whole.Use(b)
						lw, err := whole.TrainStep(step)
						if err != nil {
							return err
						}
						lp, err := part.TrainStep(step)
						if err != nil {
							return err
						}
						if lw != lp {
							return fmt.Errorf("step %d: loss %.17g on the batch, %.17g on the subgraph", step, lw, lp)
						}
						for i, prm := range whole.Params {
							if !slices.Equal(prm.Weights(), part.Params[i].Weights()) {
								return fmt.Errorf("step %d: %s differs", step, prm.Name)
							}
						}
					}
					return nil
				})
			})
		}
	}
}
