package perfmodel

import (
	"fmt"
	"math/rand/v2"
	"scalegnn/device"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// smallGraph is a random graph whose size no grid axis divides evenly.
func smallGraph(seed uint64, n, f, c int, avgDeg float64) *gcn.Graph {
	rng := rand.New(rand.NewPCG(seed, 7))
	var us, vs []int32
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			if rng.Float64() < avgDeg/float64(n) {
				us, vs = append(us, int32(u), int32(v)), append(vs, int32(v), int32(u))
			}
		}
	}
	g := &gcn.Graph{Adj: dataset.NormalizeGCN(spmm.FromCOO(n, n, us, vs, nil)), Features: make([]float32, n*f),
		Labels: make([]int32, n), Train: make([]bool, n), Val: make([]bool, n), Test: make([]bool, n)}
	for i := range g.Features {
		g.Features[i] = float32(rng.NormFloat64())
	}
	for i := 0; i < n; i++ {
		g.Labels[i] = int32(rng.IntN(c))
		g.Train[i], g.Val[i], g.Test[i] = i%3 == 0, i%3 == 1, i%3 == 2
	}
	return g
}

// jobFor describes a gcn model as a perfmodel job.
func jobFor(cfg gcn.Config, g *gcn.Graph, scheme permute.Scheme) Job {
	return Job{N: g.Adj.Rows, NNZ: int64(g.Adj.NNZ()), Features: cfg.Features, Hidden: cfg.Hidden, Classes: cfg.Classes,
		Layers: cfg.Layers, InputProjection: cfg.InputProjection, OutputHead: cfg.OutputHead, Norm: cfg.Norm,
		Residual: cfg.Residual, Dropout: cfg.Dropout, Permutation: scheme, EvalEvery: 1, Layer: cfg.Layer,
		Heads: cfg.Heads, OutputHeads: cfg.OutputHeads}
}

// residualRows counts exactly, for the permutations the model runs with,
// how many rows of layer l's input P-block land in its output R-block.
func residualRows(n int, perms *permute.Perms) func(l, pp, pi, rp, ri int) int {
	orders := [2][]int32{perms.P1, perms.P2}
	inv := [2][]int32{perms.Inv1, perms.Inv2}
	if perms.Scheme == permute.Double {
		inv[1] = permute.Inverse(perms.P2)
	}
	return func(l, pp, pi, rp, ri int) int {
		in, out := (l+1)%2, l%2
		p0, p1 := grid.Block(n, pp, pi)
		r0, r1 := grid.Block(n, rp, ri)
		c := 0
		for i := p0; i < p1; i++ {
			if pos := int(inv[out][orders[in][i]]); pos >= r0 && pos < r1 {
				c++
			}
		}
		return c
	}
}

type counted struct{ calls, bytes int64 }

// tally sums a trace's collectives per group and kind.
func tally(cs []Collective) map[[2]int]counted {
	out := map[[2]int]counted{}
	for _, c := range cs {
		k := [2]int{int(c.Group), int(c.Kind)}
		v := out[k]
		v.calls++
		v.bytes += c.Bytes()
		out[k] = v
	}
	return out
}

// snapshot reads a rank's counters per group and kind.
func snapshot(g *grid.Grid) map[[2]int]counted {
	out := map[[2]int]counted{}
	for grp, c := range map[Group]collectives.Comm{GroupX: g.XComm, GroupY: g.YComm, GroupZ: g.ZComm, GroupCube: g.Cube, GroupDP: g.DP} {
		for k := collectives.KindAllReduce; k <= collectives.KindAlltoallv; k++ {
			if n := c.Counters().Calls(k); n > 0 {
				out[[2]int{int(grp), int(k)}] = counted{n, c.Counters().Bytes(k)}
			}
		}
	}
	return out
}

func diff(a, b map[[2]int]counted) map[[2]int]counted {
	out := map[[2]int]counted{}
	for k, v := range a {
		w := b[k]
		if d := (counted{v.calls - w.calls, v.bytes - w.bytes}); d.calls != 0 || d.bytes != 0 {
			out[k] = d
		}
	}
	return out
}

func compareTally(what string, got, want map[[2]int]counted) error {
	for k := range merge(got, want) {
		if got[k] != want[k] {
			return fmt.Errorf("%s: group %v %v: counters say %d calls / %d bytes, model says %d / %d",
				what, Group(k[0]), collectives.Kind(k[1]), got[k].calls, got[k].bytes, want[k].calls, want[k].bytes)
		}
	}
	return nil
}

func merge(a, b map[[2]int]counted) map[[2]int]counted {
	out := map[[2]int]counted{}
	for k := range a {
		out[k] = counted{}
	}
	for k := range b {
		out[k] = counted{}
	}
	return out
}

var volumeConfigs = map[string]gcn.Config{
	"kipf":     {Features: 11, Hidden: 6, Classes: 5, Layers: 2, Dropout: 0.5, Seed: 3},
	"deep":     {Features: 11, Hidden: 6, Classes: 5, Layers: 3, Dropout: 0.3, Norm: true, OutputHead: true, Seed: 4},
	"scalegnn": {Features: 11, Hidden: 7, Classes: 5, Layers: 4, Dropout: 0.3, InputProjection: true, OutputHead: true, Norm: true, Residual: true, Seed: 5},
	"sage":     {Features: 11, Hidden: 6, Classes: 5, Layers: 2, Dropout: 0.5, Layer: gcn.SAGELayer, Seed: 6},
	"sagefull": {Features: 11, Hidden: 7, Classes: 5, Layers: 4, Dropout: 0.3, InputProjection: true, OutputHead: true, Norm: true, Residual: true, Layer: gcn.SAGELayer, Seed: 7},
}

func xyz(x, y, z int) grid.Shape { return grid.Shape{D: 1, X: x, Y: y, Z: z} }

// TestStepVolumeMatchesCounters runs the real model in-process for one
// training step and one evaluation on grids including non-power-of-two
// ones, and requires that the collectives the model predicts for every rank
// — calls and bytes, per communicator and kind — equal what the
// communicators' Counters recorded, exactly.
func TestStepVolumeMatchesCounters(t *testing.T) {
	g := smallGraph(1, 41, 11, 5, 5)
	shapes := []grid.Shape{xyz(1, 1, 1), xyz(2, 2, 2), xyz(1, 2, 4), xyz(4, 1, 2), xyz(1, 1, 8), xyz(8, 1, 1),
		xyz(1, 2, 3), xyz(3, 1, 2), xyz(2, 3, 1), xyz(1, 5, 1), xyz(3, 3, 1)}
	for _, name := range []string{"kipf", "deep", "scalegnn", "sage", "sagefull"} {
		cfg := volumeConfigs[name]
		for _, scheme := range []permute.Scheme{permute.None, permute.Double} {
			perms := permute.New(g.Adj.Rows, scheme, 11)
			orders := gcn.NewOrders(g.Adj.Rows, perms.P1, perms.P2)
			job := jobFor(cfg, g, scheme)
			loc := Local{ResidualRows: residualRows(g.Adj.Rows, perms)}
			for _, shape := range shapes {
				t.Run(fmt.Sprintf("%s/%v/%dx%dx%d", name, scheme, shape.X, shape.Y, shape.Z), func(t *testing.T) {
					errs := collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
						gr, err := grid.New(w, shape)
						if err != nil {
							return err
						}
						m, err := gcn.Build(gr, device.NewNative(1), cfg, gcn.DefaultOptimizer(), g, orders, gcn.Options{})
						if err != nil {
							return err
						}
						at := CoordsOf(shape, w.Rank())
						before := snapshot(gr)
						if _, err := m.TrainStep(0); err != nil {
							return err
						}
						afterStep := snapshot(gr)
						if err := compareTally("training step", diff(afterStep, before), tally(StepTrace(job, shape, at, loc).Comm)); err != nil {
							return err
						}
						if _, err := m.Evaluate(); err != nil {
							return err
						}
						return compareTally("evaluation", diff(snapshot(gr), afterStep), tally(EvalTrace(job, shape, at, loc).Comm))
					})
					for r, err := range errs {
						if err != nil {
							t.Fatalf("rank %d: %v", r, err)
						}
					}
				})
			}
		}
	}
}
