package cagnet

import (
	"fmt"
	"math"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/permute"
)

// TestValLoss: AccuracyAndValLoss's validation loss equals the mean
// cross-entropy over the validation vertices computed directly from the
// logits gathered over the process column, and the serial reference's,
// for several (P, c), GCN and SAGE, with and without a permutation; its
// accuracies are Accuracy's.
func TestValLoss(t *testing.T) {
	for _, pc := range [][2]int{{1, 1}, {3, 1}, {4, 2}, {6, 3}} {
		for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer} {
			for _, scheme := range []permute.Scheme{permute.None, permute.Single} {
				p, c := pc[0], pc[1]
				cfg, opt, g := conformanceModel(Case{C: c, Layer: layer})
				adj := g.Adj
				if layer == gcn.SAGELayer {
					adj = gcn.MeanAdjacency(adj)
				}
				ref := gcn.NewReference(cfg, opt, adj, g.Features, g.Labels, g.Train)
				serial := ref.Loss(ref.Forward(false, 0), g.Val)
				errs := collectives.RunLocal(p, func(w collectives.Comm) error {
					name := fmt.Sprintf("P=%d c=%d %v %v rank %d", p, c, layer, scheme, w.Rank())
					m, err := New(w, device.Host(1), Options{Replication: c, Permutation: scheme, PermSeed: 3}, cfg, opt, g)
					if err != nil {
						return err
					}
					logits, err := m.Forward(false)
					if err != nil {
						return err
					}
					C, n := cfg.Classes, len(m.val)
					block := make([]float32, (m.hi-m.lo)*C)
					device.DownloadMat(m.dev, block, logits)
					// Each rank holds its block row's logits, labels and
					// masks: gather all three (the validation mask as 1,
					// labels + 1) over the process column.
					all := make([]float64, n*C+2*n)
					for k, v := range block {
						all[m.lo*C+k] = float64(v)
					}
					for v := m.lo; v < m.hi; v++ {
						all[n*C+v] = float64(m.labels[v] + 1)
						if m.val[v] {
							all[n*C+n+v] = 1
						}
					}
					if m.col.Size() > 1 {
						if err := m.col.AllReduceF64(all, collectives.Sum); err != nil {
							return err
						}
					}
					sum, count := 0.0, 0
					for v := range n {
						if all[n*C+n+v] != 1 {
							continue
						}
						label := int(all[n*C+v]) - 1
						row := all[v*C : (v+1)*C]
						mx := math.Inf(-1)
						for _, x := range row {
							mx = math.Max(mx, x)
						}
						se := 0.0
						for _, x := range row {
							se += math.Exp(x - mx)
						}
						sum += math.Log(se) + mx - row[label]
						count++
					}
					want := sum / float64(count)
					acc, got, err := m.AccuracyAndValLoss()
					if err != nil {
						return err
					}
					if d := math.Abs(got - want); !(d <= 1e-12*math.Max(1, want)) || count == 0 {
						return fmt.Errorf("%s: validation loss %.15g, from the gathered logits %.15g (%d vertices)", name, got, want, count)
					}
					if d := math.Abs(got - serial); !(d <= ConformanceTol*math.Max(1, serial)) {
						return fmt.Errorf("%s: validation loss %.9g, serial reference %.9g", name, got, serial)
					}
					only, err := m.Accuracy()
					if err != nil {
						return err
					}
					if only != acc {
						return fmt.Errorf("%s: Accuracy %v, AccuracyAndValLoss %v", name, only, acc)
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
}
