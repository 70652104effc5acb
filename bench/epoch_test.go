package bench

import (
	"scalegnn/device"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
)

// benchEpoch times full-graph training steps on a 50k-vertex SBM graph
// (800k edges, 64 features, hidden 64, 8 classes, 2 layers) on the given
// in-process grid; setup is not timed.
func benchEpoch(b *testing.B, newDevice func() device.Device, shape grid.Shape) {
	src, err := dataset.SBM(dataset.SBMConfig{N: 50000, Classes: 8, AvgDegree: 16, Homophily: 0.8,
		Features: 64, NoiseStd: 1, TrainFrac: 0.1, ValFrac: 0.2, TestFrac: 0.3, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	gr := &gcn.Graph{Adj: dataset.NormalizeGCN(src.Adj), Features: src.Features, Labels: src.Labels,
		Train: src.Train, Val: src.Val, Test: src.Test}
	cfg := gcn.Config{Features: 64, Hidden: 64, Classes: 8, Layers: 2, Dropout: 0.5, Seed: 1}
	perms := permute.New(src.N, permute.Double, 1)
	orders := gcn.NewOrders(src.N, perms.P1, perms.P2)
	// Setup and the timed steps run in one in-process world; rank 0 starts
	// the clock once every rank is ready.
	errs := collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
		g, err := grid.New(w, shape)
		if err != nil {
			return err
		}
		m, err := gcn.Build(g, newDevice(), cfg, gcn.DefaultOptimizer(), gr, orders, gcn.Options{})
		if err != nil {
			return err
		}
		if err := w.Barrier(); err != nil {
			return err
		}
		if w.Rank() == 0 {
			b.ResetTimer()
		}
		for i := 0; i < b.N; i++ {
			if _, err := m.TrainStep(i); err != nil {
				return err
			}
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEpochNative1(b *testing.B) {
	benchEpoch(b, func() device.Device { return device.NewNative(0) }, grid.Shape{D: 1, X: 1, Y: 1, Z: 1})
}
func BenchmarkEpochCPU1(b *testing.B) {
	benchEpoch(b, func() device.Device { return device.NewCPU(0) }, grid.Shape{D: 1, X: 1, Y: 1, Z: 1})
}
func BenchmarkEpochCPU2x2x2(b *testing.B) {
	benchEpoch(b, func() device.Device { return device.NewCPU(1) }, grid.Shape{D: 1, X: 2, Y: 2, Z: 2})
}
