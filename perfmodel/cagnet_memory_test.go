package perfmodel

import (
	"testing"

	"scalegnn/gcn"
)

// TestCAGNETMemoryPrepared: a 1.5D job on a prepared dataset reads its
// block rows only, so its memory has no whole-graph Dataset term; in
// memory, every rank holds the loaded graph (N·F features, the CSR, 7
// bytes of labels and masks per vertex) besides its block rows. The
// labels and masks a rank keeps are indexed by position (7·N bytes)
// either way.
func TestCAGNETMemoryPrepared(t *testing.T) {
	j := Job{N: 1000, NNZ: 21000, Features: 50, Hidden: 16, Classes: 7, Layers: 2, Mode: gcn.FullGraph, EvalEvery: 1}
	mem := CAGNETMemory(j, 8, 2)
	j.ShardedLoad = true
	sharded := CAGNETMemory(j, 8, 2)
	whole := int64(8*1001) + csrBytes(1000, 21000) + 4*1000*50 + 7*1000
	if sharded.Dataset != 0 || mem.Dataset != whole {
		t.Errorf("Dataset: %d in memory (want %d, the whole graph), %d prepared (want 0)", mem.Dataset, whole, sharded.Dataset)
	}
	if mem.Total()-sharded.Total() != whole {
		t.Errorf("prepared saves %d bytes, want the whole graph's %d", mem.Total()-sharded.Total(), whole)
	}
	// 4 process rows: block row 0 is 250 vertices.
	if want := int64(250*50*4 + 4*250 + 7*1000); sharded.Features != want {
		t.Errorf("Features %d, want %d (its block row of features and ids, labels and masks by position)", sharded.Features, want)
	}
}
