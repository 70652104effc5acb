package perfmodel

import (
	"fmt"
	"scalegnn/device"
	"testing"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/sampler"
)

// sampleLocal returns the exact row counts of a mini-batch: which sampled
// vertices (sampler.Uniform, as gcn.BatchBuilder draws them) fall in each
// full-graph block of each vertex order, and the residual's row overlap.
func sampleLocal(n int, perms *permute.Perms, seed uint64, group, step, b int) Local {
	verts := sampler.Uniform(seed, group, step, n, b)
	inv := [2][]int32{perms.Inv1, permute.Inverse(perms.P2)}
	var pos [2][]int32
	for k := range pos {
		pos[k] = make([]int32, len(verts))
		for i, v := range verts {
			pos[k][i] = inv[k][v]
		}
	}
	count := func(order, parts, i int) int {
		lo, hi := grid.Block(n, parts, i)
		c := 0
		for _, p := range pos[order] {
			if int(p) >= lo && int(p) < hi {
				c++
			}
		}
		return c
	}
	res := func(l, pp, pi, rp, ri int) int {
		in, out := (l+1)%2, l%2
		p0, p1 := grid.Block(n, pp, pi)
		r0, r1 := grid.Block(n, rp, ri)
		c := 0
		for i := range verts {
			if a, b := int(pos[in][i]), int(pos[out][i]); a >= p0 && a < p1 && b >= r0 && b < r1 {
				c++
			}
		}
		return c
	}
	return Local{Rows: count, ResidualRows: res}
}

// TestMiniBatchVolumeMatchesCounters is TestStepVolumeMatchesCounters for
// mini-batch steps on 4D grids (Gd > 1, including non-power-of-two
// shapes), with float32 and bfloat16 3D-PMM sums and backward overlap: the
// model's collectives with the sample's exact row counts equal the
// counters of every communicator, the DP group's included; the
// full-graph evaluation is checked too.
func TestMiniBatchVolumeMatchesCounters(t *testing.T) {
	g := smallGraph(2, 47, 11, 5, 6)
	n := g.Adj.Rows
	const seed, batch = 9, 19
	shapes := []grid.Shape{{D: 2, X: 2, Y: 1, Z: 2}, {D: 2, X: 1, Y: 3, Z: 1}, {D: 3, X: 1, Y: 1, Z: 2}, {D: 1, X: 2, Y: 2, Z: 2}, {D: 2, X: 1, Y: 1, Z: 1}}
	for _, name := range []string{"kipf", "scalegnn", "sagefull"} {
		cfg := volumeConfigs[name]
		for _, bf16 := range []bool{false, true} {
			scheme := permute.Double
			perms := permute.New(n, scheme, 11)
			orders := gcn.NewOrders(n, perms.P1, perms.P2)
			job := jobFor(cfg, g, scheme)
			job.Mode, job.BatchSize = gcn.MiniBatch, batch
			if bf16 {
				job.CommDType = collectives.BF16
			}
			for _, shape := range shapes {
				t.Run(fmt.Sprintf("%s/bf16=%v/%s", name, bf16, GridString(shape)), func(t *testing.T) {
					errs := collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
						gr, err := grid.New(w, shape)
						if err != nil {
							return err
						}
						m, err := gcn.Build(gr, device.NewNative(1), cfg, gcn.DefaultOptimizer(), g, orders, gcn.Options{BF16: bf16, Overlap: true})
						if err != nil {
							return err
						}
						bb, err := gcn.NewBatchBuilder(gr, cfg, m.Shards(), seed, batch)
						if err != nil {
							return err
						}
						at := CoordsOf(shape, w.Rank())
						for step := 0; step < 2; step++ {
							sh, err := bb.Build(step)
							if err != nil {
								return err
							}
							m.Use(sh)
							before := snapshot(gr)
							if _, err := m.TrainStep(step); err != nil {
								return err
							}
							loc := sampleLocal(n, perms, seed, at.D, step, batch)
							if err := compareTally(fmt.Sprintf("step %d", step), diff(snapshot(gr), before), tally(StepTrace(job, shape, at, loc).Comm)); err != nil {
								return err
							}
						}
						before := snapshot(gr)
						if _, err := m.Evaluate(); err != nil {
							return err
						}
						loc := Local{ResidualRows: residualRows(n, perms)}
						return compareTally("evaluation", diff(snapshot(gr), before), tally(EvalTrace(job, shape, at, loc).Comm))
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
