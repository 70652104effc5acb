package cagnet

import (
	"fmt"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/permute"
)

// TestMiniBatchMatchesReference holds 1.5D mini-batch training with Gd
// data-parallel replicas on in-process ranks to the serial float64
// reference of gcn's data-parallel conformance (CheckBatchCase) for (Gd,
// P, c) = (2,4,2), (2,3,1), (3,2,2), (1,6,3), (2,2,1): GCN and SAGE,
// none and single permutation, with and without dropout, and bfloat16,
// each with and without prefetching.
func TestMiniBatchMatchesReference(t *testing.T) {
	for _, dpc := range [][3]int{{2, 4, 2}, {2, 3, 1}, {3, 2, 2}, {1, 6, 3}, {2, 2, 1}} {
		d, p, c := dpc[0], dpc[1], dpc[2]
		var cases []BatchCase
		for _, k := range Cases(p) {
			if k.C == c {
				cases = append(cases, BatchCase{Case: k, D: d}, BatchCase{Case: k, D: d, Prefetch: true})
			}
		}
		t.Run(fmt.Sprintf("d=%d,P=%d,c=%d", d, p, c), func(t *testing.T) {
			errs := collectives.RunLocal(d*p, func(w collectives.Comm) error {
				for _, k := range cases {
					if err := CheckBatchCase(w, device.Host(1), k); err != nil {
						return err
					}
				}
				return nil
			})
			for _, err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestMiniBatchWholeGraphIsFullGraph: a batch of every vertex (p = 1) on
// one replica trains exactly like full-graph 1.5D, bit for bit: the same
// blocks, rows and operations.
func TestMiniBatchWholeGraphIsFullGraph(t *testing.T) {
	for _, k := range []Case{
		{C: 2, Scheme: permute.Single, Dropout: 0.5, Layer: gcn.SAGELayer},
		{C: 2, Scheme: permute.Single, Dropout: 0.5, Layer: gcn.GATLayer, Heads: 4, OutputHeads: 2},
	} {
		t.Run(k.Layer.String(), func(t *testing.T) { wholeGraphIsFullGraph(t, k) })
	}
}

func wholeGraphIsFullGraph(t *testing.T, k Case) {
	cfg, opt, g := conformanceModel(k)
	order := permute.New(g.Adj.Rows, permute.Single, 3).P1
	errs := collectives.RunLocal(4, func(w collectives.Comm) error {
		src, err := gcn.NewMemorySource(g, gcn.NewOrders(g.Adj.Rows, order, nil))
		if err != nil {
			return err
		}
		full, err := NewFromSource(w, device.Host(1), Options{Replication: k.C}, cfg, opt, src)
		if err != nil {
			return err
		}
		mb, err := NewMiniBatch(w, device.Host(1), Options{Replication: k.C}, BatchOptions{Size: g.Adj.Rows, Seed: 1}, cfg, opt, src)
		if err != nil {
			return err
		}
		for step := range 3 {
			want, err := full.LossAndGrad()
			if err != nil {
				return err
			}
			got, err := mb.LossAndGrad(step)
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("rank %d step %d: loss %v, full graph %v", w.Rank(), step, got, want)
			}
			for i, p := range full.Params {
				for j, v := range p.G {
					if mb.Params[i].G[j] != v {
						return fmt.Errorf("rank %d step %d: gradient of %s entry %d = %v, full graph %v", w.Rank(), step, p.Name, j, mb.Params[i].G[j], v)
					}
				}
			}
			full.Step()
			mb.Step()
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
