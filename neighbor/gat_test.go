package neighbor

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
)

func gatConfig(g *dataset.Graph, layers, heads, outHeads int, dropout float64) gcn.Config {
	return gcn.Config{Features: g.F, Hidden: 4, Classes: g.Classes, Layers: layers, Dropout: dropout,
		Layer: gcn.GATLayer, Heads: heads, OutputHeads: outHeads, Seed: 11}
}

// TestGATReferenceGradient checks the test's own serial reference: its
// gradients equal central differences of its loss, with dropout on (the
// masks are functions of the step, so the loss is a fixed function of
// the weights).
func TestGATReferenceGradient(t *testing.T) {
	dg := testGraph(t, 30)
	cfg := gatConfig(dg, 2, 2, 2, 0.5)
	ref := newGATRef(cfg)
	blocks := []refBlock{graphBlock(dg), graphBlock(dg)}
	x := features(dg, blocks[0].verts)
	var rows, labels []int32
	for v := range dg.N {
		if dg.Train[v] {
			rows, labels = append(rows, int32(v)), append(labels, dg.Labels[v])
		}
	}
	ref.lossAndGrad(blocks, x, rows, labels, 3, true, 1)
	const h = 1e-6
	for k := range ref.W {
		for _, e := range []int{0, len(ref.W[k]) / 3, len(ref.W[k]) - 1} {
			w := ref.W[k][e]
			ref.W[k][e] = w + h
			up := ref.lossAndGrad(blocks, x, rows, labels, 3, true, 0)
			ref.W[k][e] = w - h
			down := ref.lossAndGrad(blocks, x, rows, labels, 3, true, 0)
			ref.W[k][e] = w
			fd := (up - down) / (2 * h)
			if d := math.Abs(fd - ref.G[k][e]); d > 1e-6+1e-4*math.Abs(fd) {
				t.Errorf("parameter %d entry %d: gradient %.9g, central difference %.9g", k, e, ref.G[k][e], fd)
			}
		}
	}
}

// TestGATStepEqualsReference: one GAT training step on 1 to 6 ranks
// (non-powers of two included) gives every rank the loss and the
// all-reduced gradients of the serial float64 reference run on every
// rank's sampled blocks (features from the graph itself, so the exchange
// is checked too), for 1 and 4 heads, 1 and 2 output heads, with and
// without dropout (input and attention). With full fanouts the blocks
// hold whole neighbourhoods, and the same step must also equal the
// reference on the whole graph with the step's global seeds as the
// training set. The cases alternate between the test devices.
func TestGATStepEqualsReference(t *testing.T) {
	dg := testGraph(t, 120)
	type tc struct {
		layers, heads, outHeads, ranks, batch, step int
		dropout                                     float64
		full                                        bool
	}
	var cases []tc
	ranks := []int{1, 3, 6, 2}
	n := 0
	for _, heads := range []int{1, 4} {
		for _, outHeads := range []int{1, 2} {
			for _, p := range []float64{0, 0.5} {
				r := ranks[n%len(ranks)]
				cases = append(cases, tc{layers: 2 + n%2, heads: heads, outHeads: outHeads, ranks: r, batch: 36 / r, step: n, dropout: p, full: n%3 == 0})
				n++
			}
		}
	}
	cases = append(cases, tc{layers: 3, heads: 4, outHeads: 2, ranks: 6, batch: 5, step: 4, dropout: 0.5, full: true},
		tc{layers: 2, heads: 4, outHeads: 2, ranks: 3, batch: 8, step: 1, dropout: 0.5})
	for n, c := range cases {
		newDev := testDevices[n%len(testDevices)]
		name := fmt.Sprintf("L%d/K%d/out%d/p%g/G%d/full=%v/%T", c.layers, c.heads, c.outHeads, c.dropout, c.ranks, c.full, newDev())
		t.Run(name, func(t *testing.T) {
			cfg := gatConfig(dg, c.layers, c.heads, c.outHeads, c.dropout)
			fan := make([]int, c.layers)
			for l := range fan {
				fan[l] = 3 - l%2
				if c.full {
					fan[l] = maxDegree(dg)
				}
			}
			var mu sync.Mutex
			var global []int32
			losses := make([]float64, c.ranks)
			grads := make([][][]float32, c.ranks)
			ref := newGATRef(cfg) // every rank's blocks, gradients averaged
			refLoss := 0.0
			errs := collectives.RunLocal(c.ranks, func(cm collectives.Comm) error {
				rs := setupRankOn(t, cm, newDev(), dg, cfg, fan, c.batch)
				b := rs.builder.NewBatch()
				if err := rs.builder.BuildInto(c.step, b); err != nil {
					return err
				}
				x, err := rs.trainer.Exch.Gather(&b.Plan, len(b.MFGs.Input()))
				if err != nil {
					return err
				}
				loss, err := rs.model.ForwardBackward(b, x)
				if err != nil {
					return err
				}
				if err := rs.model.AllReduceGrads(cm); err != nil {
					return err
				}
				losses[cm.Rank()] = loss
				for _, p := range rs.model.Params {
					g := make([]float32, p.Rows*p.Cols)
					downloadGrad(rs.model, p, g)
					grads[cm.Rank()] = append(grads[cm.Rank()], g)
				}
				var blocks []refBlock
				for l := range b.MFGs.Layers {
					blocks = append(blocks, mfgBlock(&b.MFGs.Layers[l]))
				}
				rows := make([]int32, len(b.Seeds))
				for i := range rows {
					rows[i] = int32(i)
				}
				mu.Lock()
				defer mu.Unlock()
				global = append(global, b.Seeds...)
				refLoss += ref.lossAndGrad(blocks, features(dg, b.MFGs.Input()), rows, b.Labels, c.step, c.dropout > 0, 1/float64(c.ranks)) / float64(c.ranks)
				return nil
			})
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			check := func(what string, ref *gatRef, want float64) {
				loss := 0.0
				for _, l := range losses {
					loss += l / float64(c.ranks)
				}
				if e := relErr(loss, want); e > 1e-5 {
					t.Errorf("%s: loss %.9g, reference %.9g (rel %.2g)", what, loss, want, e)
				}
				for r := range c.ranks {
					for k, g := range ref.G {
						if e := maxRel(grads[r][k], g); e > 1e-4 {
							t.Errorf("%s: rank %d: gradient of parameter %d off by %.2g (relative to its largest entry)", what, r, k, e)
						}
					}
				}
			}
			check("sampled blocks", ref, refLoss)
			if c.full {
				whole := newGATRef(cfg)
				labels := make([]int32, len(global))
				for i, v := range global {
					labels[i] = dg.Labels[v]
				}
				blocks := make([]refBlock, c.layers)
				for l := range blocks {
					blocks[l] = graphBlock(dg)
				}
				want := whole.lossAndGrad(blocks, features(dg, blocks[0].verts), global, labels, c.step, c.dropout > 0, 1)
				check("whole graph", whole, want)
			}
		})
	}
}

// TestGATEvaluateEqualsReference: the full-graph layer-by-layer
// evaluation of a GAT model on 1, 3 and 6 ranks gives every hidden
// layer's ELU output (Output) and the logits of the serial reference on
// the whole graph, and its accuracies.
func TestGATEvaluateEqualsReference(t *testing.T) {
	dg := testGraph(t, 200)
	for _, heads := range [][2]int{{4, 2}, {1, 1}} {
		cfg := gatConfig(dg, 3, heads[0], heads[1], 0)
		ref := newGATRef(cfg)
		ref.setBiases()
		blocks := []refBlock{graphBlock(dg), graphBlock(dg), graphBlock(dg)}
		_, logits, outs := ref.forward(blocks, features(dg, blocks[0].verts), 0, false)
		acc := func(mask []bool) float64 {
			hit, all := 0, 0
			for v, in := range mask {
				if !in {
					continue
				}
				best := 0
				for c := range logits[v] {
					if logits[v][c] > logits[v][best] {
						best = c
					}
				}
				all++
				if int32(best) == dg.Labels[v] {
					hit++
				}
			}
			return float64(hit) / float64(all)
		}
		want := gcn.Accuracy{Train: acc(dg.Train), Val: acc(dg.Val), Test: acc(dg.Test)}
		for n, ranks := range []int{1, 3, 6} {
			newDev := testDevices[n%len(testDevices)]
			errs := collectives.RunLocal(ranks, func(c collectives.Comm) error {
				rs := setupRankOn(t, c, newDev(), dg, cfg, []int{2, 2, 2}, 4)
				ref.uploadBiases(rs.model)
				ev := NewEvaluator(c, rs.g, rs.model)
				for l := range cfg.Layers {
					got, cols, err := ev.Output(l)
					if err != nil {
						return err
					}
					var w []float64
					for v := rs.g.V0; v < rs.g.V1; v++ {
						w = append(w, outs[l][v]...)
					}
					if cols*(rs.g.V1-rs.g.V0) != len(w) {
						return fmt.Errorf("heads %v, %d ranks: layer %d output has %d columns", heads, ranks, l, cols)
					}
					if e := maxRel(got, w); e > 1e-5 {
						return fmt.Errorf("heads %v, %d ranks, rank %d: layer %d's output off by %.2g", heads, ranks, c.Rank(), l, e)
					}
				}
				z, err := ev.forward()
				if err != nil {
					return err
				}
				got := make([]float32, z.Rows()*z.Cols())
				device.DownloadMat(rs.model.dev, got, z)
				var w []float64
				for v := rs.g.V0; v < rs.g.V1; v++ {
					w = append(w, logits[v]...)
				}
				if e := maxRel(got, w); e > 1e-5 {
					return fmt.Errorf("heads %v, %d ranks, rank %d: logits off by %.2g", heads, ranks, c.Rank(), e)
				}
				a, err := ev.Evaluate()
				if err != nil {
					return err
				}
				if math.Abs(a.Train-want.Train)+math.Abs(a.Val-want.Val)+math.Abs(a.Test-want.Test) > 1e-12 {
					return fmt.Errorf("heads %v, %d ranks: accuracy %+v, reference %+v", heads, ranks, a, want)
				}
				return nil
			})
			for _, err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		}
	}
}

// TestGATResumeExact: a GAT model's parameters (weights, att_src,
// att_dst and their optimizer moments) saved after 2 steps on 3 ranks and
// loaded into fresh models continue bit for bit like the run that never
// stopped: the checkpoint's parameter list holds every GAT parameter.
func TestGATResumeExact(t *testing.T) {
	dg := testGraph(t, 150)
	cfg := gatConfig(dg, 2, 4, 2, 0.5)
	const ranks, batch, steps, stop = 3, 8, 4, 2
	type saved struct {
		names   []string
		w, m, v [][]float32
	}
	// run trains steps [from, end), from the checkpoint ck when not nil,
	// and returns rank 0's losses and its parameters at the end.
	run := func(from, end int, ck *saved) ([]float64, *saved) {
		per := make([][]float64, ranks)
		out := &saved{}
		errs := collectives.RunLocal(ranks, func(c collectives.Comm) error {
			rs := setupRank(t, c, dg, cfg, []int{4, 3}, batch)
			md := rs.model
			if ck != nil {
				if md.ParamCount() != len(ck.names) {
					return fmt.Errorf("%d parameters, checkpoint %d", md.ParamCount(), len(ck.names))
				}
				for k := range md.ParamCount() {
					md.UploadParam(k, ck.w[k], ck.m[k], ck.v[k])
				}
				md.SetOptimizerSteps(from)
			}
			b := rs.builder.NewBatch()
			for s := from; s < end; s++ {
				if err := rs.builder.BuildInto(s, b); err != nil {
					return err
				}
				loss, err := rs.trainer.TrainStep(b)
				if err != nil {
					return err
				}
				per[c.Rank()] = append(per[c.Rank()], loss)
			}
			if c.Rank() != 0 {
				return nil
			}
			for k := range md.ParamCount() {
				name, r, cols := md.ParamShape(k)
				w, m, v := make([]float32, r*cols), make([]float32, r*cols), make([]float32, r*cols)
				md.DownloadParam(k, w, m, v)
				out.names = append(out.names, name)
				out.w, out.m, out.v = append(out.w, w), append(out.m, m), append(out.v, v)
			}
			return nil
		})
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		return per[0], out
	}
	straight, want := run(0, steps, nil)
	first, ck := run(0, stop, nil)
	if fmt.Sprint(ck.names) != "[gcn0.weight gcn0.att_src gcn0.att_dst gcn0.bias gcn1.weight gcn1.att_src gcn1.att_dst gcn1.bias]" {
		t.Errorf("parameters %v", ck.names)
	}
	rest, got := run(stop, steps, ck)
	losses := append(first, rest...)
	for s := range steps {
		if losses[s] != straight[s] {
			t.Errorf("step %d: loss %.9g resumed, %.9g straight", s, losses[s], straight[s])
		}
	}
	for k := range want.w {
		for i := range want.w[k] {
			if got.w[k][i] != want.w[k][i] {
				t.Errorf("parameter %s entry %d: %g resumed, %g straight", ck.names[k], i, got.w[k][i], want.w[k][i])
				break
			}
		}
	}
}

// setBiases gives the GAT biases, which start at 0, small values of both
// signs, so that a check of the forward pass sees them added.
func (r *gatRef) setBiases() {
	for l := range r.specs {
		for k := range r.W[4*l+3] {
			r.W[4*l+3][k] = 0.05 * float64(k%3-1)
		}
	}
}

// uploadBiases sets m's GAT biases to r's.
func (r *gatRef) uploadBiases(m *Model) {
	for l := range r.specs {
		b := m.Params[m.aIdx[l]+2]
		w := make([]float32, len(r.W[4*l+3]))
		for k, v := range r.W[4*l+3] {
			w[k] = float32(v)
		}
		device.Upload(m.dev, b.W, 0, w)
	}
}
