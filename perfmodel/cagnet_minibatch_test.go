package perfmodel

import (
	"fmt"
	"testing"

	"scalegnn/cagnet"
	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/method"
	"scalegnn/permute"
	"scalegnn/sampler"
)

// TestCAGNETBatchVolumeMatchesCounters: for every tested (Gd, P, c) the
// predicted calls and bytes of 1.5D mini-batch steps (with the sample's
// block-row counts, computed here from the sampler, not from the model)
// and of a full-graph evaluation, per kind, equal what the process row,
// process column and replicas' communicators of every rank counted; GCN
// and SAGE, float32 and bfloat16, single permutation.
func TestCAGNETBatchVolumeMatchesCounters(t *testing.T) {
	g := smallGraph(4, 43, 7, 3, 4)
	n := g.Adj.Rows
	const seed, batch = 5, 19
	perm := permute.New(n, permute.Single, 6)
	for _, dpc := range [][3]int{{2, 4, 2}, {2, 3, 1}, {3, 2, 2}, {1, 6, 3}, {2, 2, 1}} {
		for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer} {
			for _, bf16 := range []bool{false, true} {
				d, p, c := dpc[0], dpc[1], dpc[2]
				t.Run(fmt.Sprintf("d=%d,P=%d,c=%d/%v/bf16=%v", d, p, c, layer, bf16), func(t *testing.T) {
					cfg := gcn.Config{Features: 7, Hidden: 5, Classes: 3, Layers: 3, Seed: 2, Layer: layer, Dropout: 0.5}
					j := jobFor(cfg, g, permute.Single)
					j.Mode, j.BatchSize = gcn.MiniBatch, batch
					if bf16 {
						j.CommDType = collectives.BF16
					}
					errs := collectives.RunLocal(d*p, func(w collectives.Comm) error {
						gr, err := grid.New(w, grid.Shape{D: d, X: p, Y: 1, Z: 1})
						if err != nil {
							return err
						}
						src, err := gcn.NewMemorySource(g, gcn.NewOrders(n, perm.P1, nil))
						if err != nil {
							return err
						}
						m, err := cagnet.NewMiniBatch(gr.Cube, device.Host(1), cagnet.Options{Replication: c, BF16: bf16},
							cagnet.BatchOptions{Size: batch, Seed: seed, DP: gr.DP}, cfg, gcn.DefaultOptimizer(), src)
						if err != nil {
							return err
						}
						row, col := m.Comms()
						comms := []collectives.Comm{row, col, gr.DP}
						check := func(what string, tr Trace, run func() error) error {
							for _, cm := range comms {
								cm.Counters().Reset()
							}
							if err := run(); err != nil {
								return err
							}
							var wantCalls, wantBytes [5]int64
							for _, cl := range tr.Comm {
								wantCalls[cl.Kind]++
								wantBytes[cl.Kind] += cl.Bytes()
							}
							for k := collectives.KindAllReduce; k <= collectives.KindAlltoallv; k++ {
								var calls, bytes int64
								for _, cm := range comms {
									calls += cm.Counters().Calls(k)
									bytes += cm.Counters().Bytes(k)
								}
								if calls != wantCalls[k] || bytes != wantBytes[k] {
									return fmt.Errorf("rank %d %s %v: counted %d calls %d bytes, predicted %d calls %d bytes", w.Rank(), what, k, calls, bytes, wantCalls[k], wantBytes[k])
								}
							}
							return nil
						}
						for step := 0; step < 2; step++ {
							rows := sampleBlockRows(n, perm.Inv1, seed, gr.CD, step, batch, p/c)
							tr := CAGNETBatchStepTrace(j, d, p, c, gr.Cube.Rank(), rows)
							if err := check(fmt.Sprintf("step %d", step), tr, func() error { _, err := m.LossAndGrad(step); return err }); err != nil {
								return err
							}
							m.Step()
						}
						return check("evaluation", CAGNETEvalTrace(j, p, c, gr.Cube.Rank()), func() error { _, err := m.Accuracy(); return err })
					})
					for _, err := range errs {
						if err != nil {
							t.Error(err)
						}
					}
				})
			}
		}
	}
}

// sampleBlockRows returns the rows of each of a batch's q block rows: the
// members of group's sample at step (sampler.Uniform, vertex ids) whose
// position in the order with inverse inv falls in the full graph's block
// row k.
func sampleBlockRows(n int, inv []int32, seed uint64, group, step, b, q int) func(k int) int {
	counts := make([]int, q)
	for _, v := range sampler.Uniform(seed, group, step, n, b) {
		pos := int(inv[v])
		for k := range counts {
			if lo, hi := grid.Block(n, q, k); pos >= lo && pos < hi {
				counts[k]++
			}
		}
	}
	return func(k int) int { return counts[k] }
}

// TestPredictCAGNETBatchAll lists every (Gd, c) of 8 ranks for a
// mini-batch job — d=1 (1.5d 8x1, 4x2, 2x4, 1x8), d=2 (4x1, 2x2, 1x4),
// d=4 (2x1, 1x2), d=8 (1x1) — once each, best first, and only Gd's when
// Options.D fixes it; more replicas of a fixed batch cost more steps'
// gradient all-reduce bytes.
func TestPredictCAGNETBatchAll(t *testing.T) {
	j := Job{N: 1 << 16, NNZ: 16 << 16, Features: 64, Hidden: 64, Classes: 8, Layers: 2, EvalEvery: 5,
		Mode: gcn.MiniBatch, BatchSize: 1 << 12}
	preds, err := PredictAll(j, DefaultMachine(), Options{Ranks: 8}, Choices{method.CAGNET: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"1.5d 8x1": true, "1.5d 4x2": true, "1.5d 2x4": true, "1.5d 1x8": true,
		"1.5d d=2 4x1": true, "1.5d d=2 2x2": true, "1.5d d=2 1x4": true, "1.5d d=4 2x1": true, "1.5d d=4 1x2": true, "1.5d d=8 1x1": true}
	if len(preds) != len(want) {
		t.Fatalf("%d predictions, want %d", len(preds), len(want))
	}
	for i, p := range preds {
		if !want[p.Grid] || p.Algorithm != method.CAGNET {
			t.Errorf("unexpected or repeated grid %q (%s)", p.Grid, p.Algorithm)
		}
		delete(want, p.Grid)
		if i > 0 && preds[i-1].Fits == p.Fits && preds[i-1].Epoch > p.Epoch {
			t.Errorf("%s (%g s) ranked after %s (%g s)", p.Grid, p.Epoch, preds[i-1].Grid, preds[i-1].Epoch)
		}
		if !(p.Epoch > 0) || p.MemTotal <= 0 {
			t.Errorf("%s: epoch %g s, memory %d", p.Grid, p.Epoch, p.MemTotal)
		}
	}
	preds, err = PredictAll(j, DefaultMachine(), Options{Ranks: 8, D: 2}, Choices{method.CAGNET: true})
	if err != nil || len(preds) != 3 {
		t.Fatalf("Gd = 2: %d predictions, %v; want 3", len(preds), err)
	}
	for _, p := range preds {
		if p.Shape.D != 2 {
			t.Errorf("Gd = 2 fixed, got %s", p.Grid)
		}
	}
	if _, err := PredictAll(Job{N: 100, NNZ: 500, Features: 4, Hidden: 4, Classes: 2, Layers: 2}, DefaultMachine(), Options{Ranks: 8, D: 2}, Choices{method.CAGNET: true}); err == nil {
		t.Error("full-graph 1.5D with Gd = 2: no error")
	}
}
