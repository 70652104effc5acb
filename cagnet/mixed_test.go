package cagnet

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
)

// mixedRun is what TestMixedTapeExact compares of one rank's run: the
// losses, every parameter's gradients and weights after each step, the
// hidden layers' embeddings and the probabilities afterwards, as float64
// bits, and which layers kept their output in bfloat16.
type mixedRun struct {
	bits  []uint64
	kept  []bool
	featB bool // the features were bfloat16
}

// staged makes m the model the mixed-precision tests compare with: its
// precision float32 on the bfloat16 products (every product rounds its
// operands in the device's staging), its bfloat16 features
// (FeaturesInBF16) widened to float32, exactly: the staging rounds them
// back to the same bits.
func (m *Model) staged() {
	m.prec = device.Float32
	if !m.featB {
		return
	}
	m.x = m.mat(m.xb.Rows(), m.xb.Cols())
	m.dev.UnpackMatBF16(m.x, m.xb)
	m.xb, m.featB = device.MatBF16{}, false
}

// staged is Model.staged for mini-batches: the full graph's view and the
// batches' gathers take the widened features.
func (b *MiniBatch) staged() {
	featB := b.featB
	b.Model.staged()
	if featB {
		b.full.x, b.full.xb = b.x, device.MatBF16{}
		b.xb = device.Alloc[float32](b.dev, b.xbb.Len())
	}
}

// runMixed trains 3 steps of 1.5D on P ranks with the bf16 products and
// returns each rank's mixedRun; prec is the model's precision (Float32:
// every product rounds its operands in the device's staging).
func runMixed(t *testing.T, p int, c Case, prec device.Precision) []mixedRun {
	t.Helper()
	cfg, opt, g := conformanceModel(c)
	runs := make([]mixedRun, p)
	errs := collectives.RunLocal(p, func(w collectives.Comm) error {
		dev := device.WithPrecision(device.Host(1), device.BF16)
		m, err := New(w, dev, Options{Replication: c.C, Permutation: c.Scheme, PermSeed: 3, BF16: c.BF16}, cfg, opt, g)
		if err != nil {
			return err
		}
		if prec == device.Float32 {
			m.staged()
		}
		r := &runs[w.Rank()]
		r.featB = m.featB
		add := func(v ...float64) {
			for _, x := range v {
				r.bits = append(r.bits, math.Float64bits(x))
			}
		}
		for range 3 {
			loss, err := m.LossAndGrad()
			if err != nil {
				return err
			}
			add(loss)
			r.kept = append(r.kept[:0], m.zbOK...)
			for _, q := range m.Params {
				add(q.G...)
			}
			m.Step()
			for _, q := range m.Params {
				add(q.W...)
			}
		}
		for l := 0; l < gcn.LastHidden(cfg)+1; l++ {
			b, err := m.Embeddings(l)
			if err != nil {
				return err
			}
			for _, x := range b.Data {
				add(float64(x))
			}
		}
		b, err := m.Probabilities()
		if err != nil {
			return err
		}
		for _, x := range b.Data {
			add(float64(x))
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return runs
}

// TestMixedTapeExact: in mixed precision, 1.5D keeping its tape in
// bfloat16 and broadcasting bfloat16 operands (mixed.go) trains bit for
// bit as the same job whose device rounds every operand in its staging
// (the model's precision set to float32 on the bf16 products): losses, gradients and
// weights over 3 steps, embeddings and probabilities, on grids of 1 to 6
// ranks (P/c process rows of c replicas), GCN and SAGE, with and without
// dropout and bfloat16 communication. The hidden GCN and SAGE layers
// must keep their output in bfloat16 (the path under test), the last
// not.
func TestMixedTapeExact(t *testing.T) {
	old := ScratchElems
	ScratchElems = 3 * 5 // blocks of 3 rows at the hidden width: many blocks
	defer func() { ScratchElems = old }()
	grids := [][2]int{{1, 1}, {2, 1}, {3, 3}, {4, 2}, {6, 2}, {5, 1}}
	for _, pc := range grids {
		for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer} {
			for _, drop := range []float64{0, 0.5} {
				for _, bf16 := range []bool{false, true} {
					c := Case{C: pc[1], Scheme: permute.Single, Dropout: drop, Layer: layer, BF16: bf16}
					t.Run(fmt.Sprintf("P=%d/%v", pc[0], c), func(t *testing.T) {
						want := runMixed(t, pc[0], c, device.Float32)
						got := runMixed(t, pc[0], c, device.BF16)
						for rank := range got {
							g, w := got[rank], want[rank]
							if len(g.bits) != len(w.bits) {
								t.Fatalf("rank %d: %d values, want %d", rank, len(g.bits), len(w.bits))
							}
							for k := range w.bits {
								if g.bits[k] != w.bits[k] {
									t.Fatalf("rank %d: value %d = %v, staged %v", rank, k, math.Float64frombits(g.bits[k]), math.Float64frombits(w.bits[k]))
								}
							}
							if !g.featB || w.featB {
								t.Errorf("rank %d: features in bfloat16 %v (staged run %v), want true (staged false)", rank, g.featB, w.featB)
							}
							for l, k := range g.kept {
								if want := l < len(g.kept)-1; k != want || w.kept[l] {
									t.Errorf("rank %d: layer %d kept its output in bfloat16: %v (staged run %v), want %v (staged false)", rank, l, k, w.kept[l], want)
								}
							}
						}
					})
				}
			}
		}
	}
}

// TestMixedBatchExact is TestMixedTapeExact for 1.5D mini-batches on d
// data-parallel replicas: the batches' uneven block rows and the full
// graph's evaluation share the bfloat16 buffers (rowsCap).
func TestMixedBatchExact(t *testing.T) {
	for _, dq := range [][3]int{{1, 1, 1}, {2, 1, 1}, {1, 3, 1}, {2, 2, 2}, {1, 6, 2}} {
		for _, drop := range []float64{0, 0.5} {
			for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer} {
				c := Case{C: dq[2], Scheme: permute.Single, Dropout: drop, Layer: layer}
				t.Run(fmt.Sprintf("d=%d/P=%d/%v", dq[0], dq[1], c), func(t *testing.T) {
					want := runMixedBatch(t, dq[0], dq[1], c, device.Float32)
					got := runMixedBatch(t, dq[0], dq[1], c, device.BF16)
					for rank := range got {
						if len(got[rank]) != len(want[rank]) {
							t.Fatalf("rank %d: %d values, want %d", rank, len(got[rank]), len(want[rank]))
						}
						for k, w := range want[rank] {
							if got[rank][k] != w {
								t.Fatalf("rank %d: value %d = %v, staged %v", rank, k, math.Float64frombits(got[rank][k]), math.Float64frombits(w))
							}
						}
					}
				})
			}
		}
	}
}

// runMixedBatch trains 3 mini-batch steps on d replicas of p ranks with
// the bf16 products and returns each rank's losses, gradients, weights
// and accuracies as float64 bits; prec is the model's precision.
func runMixedBatch(t *testing.T, d, p int, c Case, prec device.Precision) [][]uint64 {
	t.Helper()
	cfg, opt, g := conformanceModel(c)
	src, err := gcn.NewMemorySource(g, gcn.NewOrders(g.Adj.Rows, permute.New(g.Adj.Rows, permute.Single, 3).P1, nil))
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]uint64, d*p)
	errs := collectives.RunLocal(d*p, func(w collectives.Comm) error {
		gr, err := grid.New(w, grid.Shape{D: d, X: p, Y: 1, Z: 1})
		if err != nil {
			return err
		}
		dev := device.WithPrecision(device.Host(1), device.BF16)
		m, err := NewMiniBatch(gr.Cube, dev, Options{Replication: c.C},
			BatchOptions{Size: conformanceBatch, Seed: conformanceBatchSeed, DP: gr.DP}, cfg, opt, src)
		if err != nil {
			return err
		}
		if prec == device.Float32 {
			m.staged()
		}
		defer m.Close()
		add := func(v ...float64) {
			for _, x := range v {
				out[w.Rank()] = append(out[w.Rank()], math.Float64bits(x))
			}
		}
		for step := range 3 {
			loss, err := m.LossAndGrad(step)
			if err != nil {
				return err
			}
			add(loss)
			for _, q := range m.Params {
				add(q.G...)
			}
			m.Step()
			for _, q := range m.Params {
				add(q.W...)
			}
		}
		acc, err := m.Accuracy()
		if err != nil {
			return err
		}
		add(acc[:]...)
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
