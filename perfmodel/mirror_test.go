package perfmodel

import (
	"testing"

	"scalegnn/gcn"
	"scalegnn/permute"
)

// TestDiagonalBlocksAreTheirOwnTransposes: a GCN rank whose block lies on
// the diagonal keeps no transpose of it, as gcn.NewShards does: on one
// rank a 2-layer GCN (whose second layer needs Âᵀ of the one block both
// layers share) takes what a 1-layer one does, and on 3x3x3 rank 0 (equal
// coordinates) less than a rank off the diagonal. SAGE's D^-1 A is not
// symmetric and keeps its transpose.
func TestDiagonalBlocksAreTheirOwnTransposes(t *testing.T) {
	job := func(layer gcn.Layer, layers int) Job {
		return Job{N: 1000, NNZ: 9000, Features: 16, Hidden: 8, Classes: 4, Layers: layers, Layer: layer, Mode: gcn.FullGraph,
			Permutation: permute.Single, ShardedLoad: true}
	}
	adj := func(j Job, s [3]int, at Coords) int64 { return EstimateMemory(j, xyz(s[0], s[1], s[2]), at).Adjacency }
	one := [3]int{1, 1, 1}
	if a1, a2 := adj(job(gcn.GCNLayer, 1), one, Coords{}), adj(job(gcn.GCNLayer, 2), one, Coords{}); a2 != a1 {
		t.Errorf("GCN on one rank: 2 layers take %d bytes of adjacency, 1 layer %d: the diagonal block's transpose was counted", a2, a1)
	}
	if a1, a2 := adj(job(gcn.SAGELayer, 1), one, Coords{}), adj(job(gcn.SAGELayer, 2), one, Coords{}); a2 <= a1 {
		t.Errorf("SAGE on one rank: 2 layers take %d bytes of adjacency, 1 layer %d: D^-1 A's transpose is missing", a2, a1)
	}
	// 3x3x3: rank 0's coordinates are all equal, (0, 1, 2)'s all differ;
	// a transpose (about 1000/3 rows and 9000/9 nonzeros) outweighs the
	// blocks' differences of a row.
	cube := [3]int{3, 3, 3}
	if on, off := adj(job(gcn.GCNLayer, 2), cube, Coords{}), adj(job(gcn.GCNLayer, 2), cube, Coords{X: 0, Y: 1, Z: 2}); on >= off {
		t.Errorf("GCN 3x3x3: rank 0 (diagonal) %d bytes, a rank off the diagonal %d: want fewer on the diagonal", on, off)
	}
}
