package gcn

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"scalegnn/collectives"
	"scalegnn/grid"
	"scalegnn/permute"
	"scalegnn/sampler"
	"scalegnn/spmm"
)

// buildAllocating is BatchBuilder.Build as it was before batches reused
// their storage: every array of the batch new. BuildInto into reused
// batches must produce exactly its batches.
func buildAllocating(bb *BatchBuilder, step int) *Shards {
	g, full := bb.g, bb.full
	verts := sampler.Uniform(bb.seed, bb.group, step, full.N, bb.b)
	o := &Orders{parent: full.Orders}
	for k := 0; k < 2; k++ {
		if k == 1 && bb.same {
			o.pos[1], o.Order[1] = o.pos[0], o.Order[0]
			break
		}
		o.pos[k] = sampler.Positions(verts, full.Orders.inv[k])
		o.Order[k] = make([]int32, len(verts))
		for i, p := range o.pos[k] {
			o.Order[k][i] = full.Orders.Order[k][p]
		}
	}
	var bounds [2][3][]int
	for k := 0; k < 2; k++ {
		for _, a := range []grid.Axis{grid.X, grid.Y, grid.Z} {
			parts := g.Size(a)
			bounds[k][a] = sampler.Bounds(o.pos[k], parts, func(i int) (int, int) { return grid.Block(full.N, parts, i) })
		}
	}
	sh := &Shards{N: bb.b, Features: full.Features, Classes: full.Classes, Orders: o,
		adj: map[grid.Shard]*adjShard{}, bounds: &bounds, sameOrders: full.sameOrders}
	local := func(k int, a grid.Axis) (pos, ids []int32) {
		lo, hi := sh.rows(g, k, a)
		return o.pos[k][lo:hi], o.Order[k][lo:hi]
	}
	for _, s := range bb.shards {
		rows, rowIDs := local(s.out, s.rowAxis)
		cols, colIDs := local(s.in, s.colAxis)
		// A fresh Extractor: no tagged map carried over from other steps.
		ex := sampler.NewExtractor(s.ex.A, s.ex.R0, s.ex.C0)
		a, at := ex.Extract(rows, cols, rowIDs, colIDs, bb.p, s.needsTranspose)
		sh.adj[s.key] = &adjShard{a: a, at: at}
	}
	rows, _ := local(1, grid.X)
	for _, p := range rows {
		i := int(p) - bb.fr0
		sh.X = append(sh.X, full.X[i*bb.fw:(i+1)*bb.fw]...)
	}
	rowAxis, _ := logitsAxes(bb.cfg)
	lr0, _ := g.Range(full.N, rowAxis)
	rows, _ = local(grid.OutputOrder(bb.cfg.Layers-1), rowAxis)
	for _, p := range rows {
		i := int(p) - lr0
		sh.Labels = append(sh.Labels, full.Labels[i])
		sh.Train, sh.Val, sh.Test = append(sh.Train, full.Train[i]), append(sh.Val, full.Val[i]), append(sh.Test, full.Test[i])
	}
	return sh
}

// sameBatch reports the first difference between two batches: sizes,
// orders, bounds, every adjacency block and transpose (values bit for
// bit), features, labels and masks.
func sameBatch(got, want *Shards) error {
	if got.N != want.N || got.Features != want.Features || got.Classes != want.Classes || got.sameOrders != want.sameOrders {
		return fmt.Errorf("sizes %d/%d/%d/%v, want %d/%d/%d/%v", got.N, got.Features, got.Classes, got.sameOrders,
			want.N, want.Features, want.Classes, want.sameOrders)
	}
	g, w := got.Orders, want.Orders
	if g.parent != w.parent {
		return fmt.Errorf("orders of another graph")
	}
	for k := 0; k < 2; k++ {
		if !slices.Equal(g.Order[k], w.Order[k]) || !slices.Equal(g.pos[k], w.pos[k]) || len(g.inv[k]) != 0 {
			return fmt.Errorf("order %d differs", k)
		}
		for a := range got.bounds[k] {
			if !slices.Equal(got.bounds[k][a], want.bounds[k][a]) {
				return fmt.Errorf("bounds of order %d over axis %d: %v, want %v", k, a, got.bounds[k][a], want.bounds[k][a])
			}
		}
	}
	if len(got.adj) != len(want.adj) {
		return fmt.Errorf("%d adjacency shards, want %d", len(got.adj), len(want.adj))
	}
	for key, ws := range want.adj {
		gs := got.adj[key]
		if gs == nil {
			return fmt.Errorf("no shard %v", key)
		}
		if err := bitsCSR(gs.a, ws.a); err != nil {
			return fmt.Errorf("shard %v: %v", key, err)
		}
		if (gs.at == nil) != (ws.at == nil) {
			return fmt.Errorf("shard %v: transpose kept %v, want %v", key, gs.at != nil, ws.at != nil)
		}
		if ws.at != nil {
			if err := bitsCSR(gs.at, ws.at); err != nil {
				return fmt.Errorf("shard %v transpose: %v", key, err)
			}
		}
	}
	if len(got.X) != len(want.X) {
		return fmt.Errorf("%d feature values, want %d", len(got.X), len(want.X))
	}
	for i := range got.X {
		if math.Float32bits(got.X[i]) != math.Float32bits(want.X[i]) {
			return fmt.Errorf("feature value %d is %g, want %g", i, got.X[i], want.X[i])
		}
	}
	if !slices.Equal(got.Labels, want.Labels) || !slices.Equal(got.Train, want.Train) ||
		!slices.Equal(got.Val, want.Val) || !slices.Equal(got.Test, want.Test) {
		return fmt.Errorf("labels or masks differ")
	}
	return nil
}

// bitsCSR is sameCSR with values compared bit for bit.
func bitsCSR(got, want *spmm.CSR) error {
	if err := sameCSR(got, want); err != nil {
		return err
	}
	for k := range got.Val {
		if math.Float32bits(got.Val[k]) != math.Float32bits(want.Val[k]) {
			return fmt.Errorf("value %d is %g, want %g", k, got.Val[k], want.Val[k])
		}
	}
	return nil
}

// TestBuildIntoIsTheAllocatingBuild: on every grid, with and without
// double permutation, for models with and without transposed shards, two
// batches reused in turn over several steps (as a prefetcher recycles
// them) hold exactly the batches the allocating build makes.
func TestBuildIntoIsTheAllocatingBuild(t *testing.T) {
	p := newProblem(23, 61, 11, 5, 7)
	const seed, b, steps = 5, 23, 6
	shapes := []grid.Shape{xyz(1, 1, 1), xyz(2, 2, 2), xyz(1, 2, 3), xyz(3, 1, 2), {D: 2, X: 2, Y: 1, Z: 1}}
	for _, name := range []string{"kipf", "scalegnn"} {
		cfg := testConfigs[name]
		for _, scheme := range []permute.Scheme{permute.None, permute.Single, permute.Double} {
			for _, shape := range shapes {
				t.Run(fmt.Sprintf("%s/%v/%v", name, scheme, shape), func(t *testing.T) {
					perms := permute.New(p.n, scheme, 17)
					orders := NewOrders(p.n, perms.P1, perms.P2)
					runLocal(t, shape.Ranks(), func(w collectives.Comm) error {
						_, _, bb, err := batchModel(w, shape, cfg, DefaultOptimizer(), p, orders, seed, b)
						if err != nil {
							return err
						}
						pool := [2]*Shards{bb.NewBatch(), bb.NewBatch()}
						for step := 0; step < steps; step++ {
							sh := pool[step%2]
							if err := bb.BuildInto(step, sh); err != nil {
								return err
							}
							if err := sameBatch(sh, buildAllocating(bb, step)); err != nil {
								return fmt.Errorf("step %d: %v", step, err)
							}
						}
						return nil
					})
				})
			}
		}
	}
}

// TestBuildIntoSteadyStateAllocatesNothing: on one rank, once a batch has
// held the batches of a cycle of steps, building them into it again
// allocates nothing — for a model with transposed shards and double
// permutation (two orders, six shards) and for a plain one.
func TestBuildIntoSteadyStateAllocatesNothing(t *testing.T) {
	p := newProblem(29, 200, 11, 5, 9)
	const seed, b, steps = 3, 70, 8
	for _, c := range []struct {
		name   string
		scheme permute.Scheme
	}{{"scalegnn", permute.Double}, {"kipf", permute.None}, {"gat", permute.Double}} {
		perms := permute.New(p.n, c.scheme, 7)
		orders := NewOrders(p.n, perms.P1, perms.P2)
		cfg, ok := testConfigs[c.name]
		if !ok {
			cfg = gatTestConfigs[c.name]
		}
		runLocal(t, 1, func(w collectives.Comm) error {
			_, _, bb, err := batchModel(w, xyz(1, 1, 1), cfg, DefaultOptimizer(), p, orders, seed, b)
			if err != nil {
				return err
			}
			sh := bb.NewBatch()
			step := 0
			build := func() {
				if err := bb.BuildInto(step%steps, sh); err != nil {
					t.Error(err)
				}
				step++
			}
			for range steps {
				build()
			}
			if allocs := testing.AllocsPerRun(2*steps, build); allocs != 0 {
				t.Errorf("%s/%v: a steady-state BuildInto allocates %v times, want 0", c.name, c.scheme, allocs)
			}
			// Still the right batch after all that reuse.
			build()
			return sameBatch(sh, buildAllocating(bb, (step-1)%steps))
		})
	}
}

// TestBuildIntoForeignBatchPanics: BuildInto refuses storage that is not
// one of its builder's batches (the full shards, another graph's batch).
func TestBuildIntoForeignBatchPanics(t *testing.T) {
	p := newProblem(31, 40, 11, 5, 5)
	cfg := testConfigs["kipf"]
	runLocal(t, 1, func(w collectives.Comm) error {
		_, m, bb, err := batchModel(w, xyz(1, 1, 1), cfg, DefaultOptimizer(), p, NewOrders(p.n, nil, nil), 1, 10)
		if err != nil {
			return err
		}
		_, _, other, err := batchModel(w, xyz(1, 1, 1), cfg, DefaultOptimizer(), p, NewOrders(p.n, nil, nil), 1, 10)
		if err != nil {
			return err
		}
		for name, dst := range map[string]*Shards{"the full shards": m.Shards(), "another builder's batch": other.NewBatch(), "nil": nil} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("BuildInto of %s did not panic", name)
					}
				}()
				bb.BuildInto(0, dst)
			}()
		}
		return nil
	})
}

// BenchmarkBatchBuild times one rank's batch of 500 of 5000 vertices
// (double permutation, the every-option model) built into new storage and
// into reused storage.
func BenchmarkBatchBuild(b *testing.B) {
	p := newProblem(37, 5000, 11, 5, 12)
	perms := permute.New(p.n, permute.Double, 3)
	orders := NewOrders(p.n, perms.P1, perms.P2)
	runLocal(b, 1, func(w collectives.Comm) error {
		_, _, bb, err := batchModel(w, xyz(1, 1, 1), testConfigs["scalegnn"], DefaultOptimizer(), p, orders, 1, 500)
		if err != nil {
			return err
		}
		b.Run("new", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := bb.Build(i); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("reused", func(b *testing.B) {
			sh := bb.NewBatch()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := bb.BuildInto(i, sh); err != nil {
					b.Fatal(err)
				}
			}
		})
		return nil
	})
}

// TestPrefetchedBatchesTrainAsBuilt: a model trained on batches that a
// prefetcher builds into recycled storage (released after each step, as
// jobs.Train does) takes the same losses, bit for bit, as one trained on
// freshly built batches — so no step reads a batch being rebuilt (run
// with -race as well).
func TestPrefetchedBatchesTrainAsBuilt(t *testing.T) {
	p := newProblem(41, 50, 11, 5, 6)
	const seed, b, steps = 2, 20, 6
	shape := xyz(1, 2, 1)
	cfg := testConfigs["scalegnn"]
	perms := permute.New(p.n, permute.Double, 5)
	orders := NewOrders(p.n, perms.P1, perms.P2)
	runLocal(t, shape.Ranks(), func(w collectives.Comm) error {
		_, fresh, fb, err := batchModel(w, shape, cfg, DefaultOptimizer(), p, orders, seed, b)
		if err != nil {
			return err
		}
		_, reused, rb, err := batchModel(w, shape, cfg, DefaultOptimizer(), p, orders, seed, b)
		if err != nil {
			return err
		}
		pf := sampler.NewPrefetcher(rb.NewBatch, rb.BuildInto, 0, true)
		defer pf.Close()
		for step := 0; step < steps; step++ {
			sh, err := fb.Build(step)
			if err != nil {
				return err
			}
			fresh.Use(sh)
			want, err := fresh.TrainStep(step)
			if err != nil {
				return err
			}
			batch, _, _, err := pf.Next()
			if err != nil {
				return err
			}
			reused.Use(batch)
			got, err := reused.TrainStep(step)
			if err != nil {
				return err
			}
			pf.Release(batch)
			if math.Float64bits(got) != math.Float64bits(want) {
				return fmt.Errorf("step %d: loss %v on recycled batches, %v on fresh ones", step, got, want)
			}
		}
		return nil
	})
}
