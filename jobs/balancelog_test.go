package jobs

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"scalegnn/dataset"
	"scalegnn/grid"
	"scalegnn/permute"
)

// TestBalanceLogFollowsTheGridRule: the start-up balance log has one line
// per shard gcn keeps (grid.ShardsOf), named by the first layer using it.
func TestBalanceLogFollowsTheGridRule(t *testing.T) {
	g, err := dataset.Builtin("cora")
	if err != nil {
		t.Fatal(err)
	}
	adj := dataset.NormalizeGCN(g.Adj)
	shape := grid.Shape{D: 1, X: 2, Y: 2, Z: 1}
	for layers := 1; layers <= 7; layers++ {
		for _, scheme := range []permute.Scheme{permute.None, permute.Single, permute.Double} {
			core, logs := observer.New(zap.InfoLevel)
			logBalance(zap.New(core), adj, permute.New(g.N, scheme, 1), shape, layers)
			want := grid.ShardsOf(layers, scheme == permute.Double)
			got := logs.FilterMessage("nonzero balance").All()
			if len(got) != len(want) {
				t.Fatalf("%d layers, %v: %d balance lines, want %d", layers, scheme, len(got), len(want))
			}
			for i, e := range got {
				if l := e.ContextMap()["layer"]; l != int64(want[i].FirstUse(scheme == permute.Double)) {
					t.Errorf("%d layers, %v: line %d names layer %v, want %d", layers, scheme, i, l, want[i].FirstUse(scheme == permute.Double))
				}
			}
		}
	}
}
