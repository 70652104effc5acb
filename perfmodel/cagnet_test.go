package perfmodel

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/cagnet"
	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
)

// TestCAGNETVolumeMatchesCounters: for every tested (P, c) the predicted
// calls and bytes of one 1.5D training step and of one evaluation, per
// kind, equal what the collectives of every rank counted, in float32 and
// in mixed precision (whose aggregation operands travel as bfloat16).
func TestCAGNETVolumeMatchesCounters(t *testing.T) {
	g := smallGraph(4, 43, 7, 3, 4)
	type variant struct {
		layer gcn.Layer
		bf16  bool
		prec  device.Precision
	}
	for _, pc := range [][2]int{{1, 1}, {4, 1}, {4, 2}, {8, 2}, {6, 3}, {8, 4}, {16, 4}} {
		for _, v := range []variant{{layer: gcn.GCNLayer}, {layer: gcn.SAGELayer}, {layer: gcn.GCNLayer, bf16: true}, {layer: gcn.SAGELayer, bf16: true},
			{layer: gcn.GATLayer}, {layer: gcn.GATLayer, bf16: true},
			{layer: gcn.GCNLayer, prec: device.BF16}, {layer: gcn.SAGELayer, bf16: true, prec: device.BF16}} {
			if v != (variant{}) && pc[0] == 16 {
				continue // the largest case once is enough
			}
			cagnetVolumeCase(t, g, pc[0], pc[1], v.layer, v.bf16, v.prec)
		}
	}
}

// cagnetVolumeCase runs one (P, c, layer, dtype) of
// TestCAGNETVolumeMatchesCounters.
func cagnetVolumeCase(t *testing.T, g *gcn.Graph, p, c int, layer gcn.Layer, bf16 bool, prec device.Precision) {
	t.Helper()
	cfg := gcn.Config{Features: 7, Hidden: 5, Classes: 3, Layers: 3, Seed: 2, Layer: layer, Dropout: 0.5}
	if layer == gcn.GATLayer {
		cfg.Heads, cfg.OutputHeads = 4, 2
	}
	j := jobFor(cfg, g, permute.None)
	if bf16 {
		j.CommDType = collectives.BF16
	}
	j.Precision = prec
	{
		errs := collectives.RunLocal(p, func(w collectives.Comm) error {
			m, err := cagnet.New(w, device.WithPrecision(device.Host(1), prec), cagnet.Options{Replication: c, BF16: bf16}, cfg, gcn.DefaultOptimizer(), g)
			if err != nil {
				return err
			}
			row, col := m.Comms()
			check := func(what string, tr Trace, run func() error) error {
				row.Counters().Reset()
				col.Counters().Reset()
				if err := run(); err != nil {
					return err
				}
				var wantCalls, wantBytes [5]int64
				for _, cl := range tr.Comm {
					wantCalls[cl.Kind]++
					wantBytes[cl.Kind] += cl.Bytes()
				}
				for k := collectives.KindAllReduce; k <= collectives.KindAlltoallv; k++ {
					calls := row.Counters().Calls(k) + col.Counters().Calls(k)
					bytes := row.Counters().Bytes(k) + col.Counters().Bytes(k)
					if calls != wantCalls[k] || bytes != wantBytes[k] {
						return fmt.Errorf("P=%d c=%d %v bf16 %v precision %v rank %d %s %v: counted %d calls %d bytes, predicted %d calls %d bytes", p, c, layer, bf16, prec, w.Rank(), what, k, calls, bytes, wantCalls[k], wantBytes[k])
					}
				}
				return nil
			}
			if err := check("training step", CAGNETStepTrace(j, p, c, w.Rank()), func() error { _, err := m.LossAndGrad(); return err }); err != nil {
				return err
			}
			if err := check("evaluation", CAGNETEvalTrace(j, p, c, w.Rank()), func() error { _, err := m.Accuracy(); return err }); err != nil {
				return err
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

// TestPredictCAGNETAll lists every c dividing P once, best first, with
// ordered by predicted epoch, and replication costs memory (c = P: rank 0
// holds all of Â; c = 1: a P-th of it).
func TestPredictCAGNETAll(t *testing.T) {
	j := Job{N: 1 << 17, NNZ: 16 << 17, Features: 128, Hidden: 128, Classes: 16, Layers: 3}
	preds := PredictCAGNETAll(j, DefaultMachine(), Options{Ranks: 8})
	want := map[string]bool{"1.5d 8x1": true, "1.5d 4x2": true, "1.5d 2x4": true, "1.5d 1x8": true}
	if len(preds) != len(want) {
		t.Fatalf("%d predictions, want %d", len(preds), len(want))
	}
	for i, p := range preds {
		if !want[p.Grid] {
			t.Errorf("unexpected or repeated grid %q", p.Grid)
		}
		delete(want, p.Grid)
		if i > 0 && preds[i-1].Fits == p.Fits && preds[i-1].Epoch > p.Epoch {
			t.Errorf("%s (%g s) ranked after %s (%g s)", p.Grid, p.Epoch, preds[i-1].Grid, preds[i-1].Epoch)
		}
		if !(p.Epoch > 0) || p.MemTotal <= 0 {
			t.Errorf("%s: epoch %g s, memory %d", p.Grid, p.Epoch, p.MemTotal)
		}
	}
	// c = P holds the whole graph per rank; c = 1 a P-th of it.
	if a, b := CAGNETMemory(j, 8, 8).Adjacency, CAGNETMemory(j, 8, 1).Adjacency; a <= b {
		t.Errorf("adjacency with c = 8: %d bytes, with c = 1: %d; replication must cost memory", a, b)
	}
}

// TestCAGNETMeasuredBroadcast: a profile's comm.bcast times 1.5D's
// intra-node broadcasts as ⌈log2 p⌉·α + M/β (and survives a write and a
// load); without it they are binomial trees on the intra link; other
// collectives and the 3D grids do not change.
func TestCAGNETMeasuredBroadcast(t *testing.T) {
	j := Job{N: 1 << 14, NNZ: 16 << 14, Features: 64, Hidden: 128, Classes: 8, Layers: 3, EvalEvery: 5}
	m := DefaultMachine()
	b := Link{Latency: 1e-4, Bandwidth: 2}
	mb := DefaultMachine()
	mb.Comm.Bcast = b
	path := t.TempDir() + "/m.toml"
	if err := mb.WriteFile(path, "test"); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadMachine(path)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Comm.Bcast != b {
		t.Fatalf("comm.bcast after a write and a load: %+v, %v; want %+v", loaded.Comm.Bcast, err, b)
	}
	for _, pc := range [][2]int{{8, 1}, {8, 2}, {8, 8}} {
		p, c := pc[0], pc[1]
		var bcastTree, bcastMeasured, rest float64
		links, _ := m.cagnetLinks(p, c, 8)
		tr := CAGNETStepTrace(j, p, c, 0)
		ev := CAGNETEvalTrace(j, p, c, 0)
		for w, calls := range map[float64][]Collective{1: tr.Comm, 1.0 / 5: ev.Comm} {
			for _, cl := range calls {
				if cl.Kind != collectives.KindBcast {
					rest += w * CollectiveTime(cl, links[cl.Group])
					continue
				}
				bcastTree += w * CollectiveTime(cl, links[cl.Group])
				bcastMeasured += w * (math.Ceil(math.Log2(float64(cl.Size)))*b.Latency + float64(cl.Bytes())/(b.Bandwidth*1e9))
			}
		}
		a, z := PredictCAGNET(j, m, p, c, 8, 0), PredictCAGNET(j, loaded, p, c, 8, 0)
		if d := math.Abs(a.Comm - (bcastTree + rest)); d > 1e-9*a.Comm {
			t.Errorf("P=%d c=%d without comm.bcast: comm %g s, want %g", p, c, a.Comm, bcastTree+rest)
		}
		if d := math.Abs(z.Comm - (bcastMeasured + rest)); d > 1e-9*z.Comm {
			t.Errorf("P=%d c=%d with comm.bcast: comm %g s, want %g", p, c, z.Comm, bcastMeasured+rest)
		}
	}
	if a, z := PredictShape(j, m, grid.Shape{D: 1, X: 2, Y: 2, Z: 2}, 8, 0), PredictShape(j, loaded, grid.Shape{D: 1, X: 2, Y: 2, Z: 2}, 8, 0); a.Epoch != z.Epoch {
		t.Errorf("3D 2x2x2: %g s without comm.bcast, %g with; 3D has no broadcasts", a.Epoch, z.Epoch)
	}
}
