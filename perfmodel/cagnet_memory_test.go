package perfmodel

import (
	"testing"

	"scalegnn/cagnet"
	"scalegnn/device"
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

// TestCAGNETFeaturesBF16: in mixed precision a 1.5D rank holds its
// block row of the features in bfloat16 (cagnet.FeaturesInBF16), and a
// batch its gathered rows, unless the first layer is a GAT layer; the
// first layer then reads them as they are, so it packs no copy of its
// own, and with dropout it drops them into one bfloat16 copy (a SAGE
// layer no longer keeps a float32 one).
func TestCAGNETFeaturesBF16(t *testing.T) {
	const n, f = 1000, 50
	rows := int64(250) // block row 0 of 4
	for _, c := range []struct {
		name  string
		layer gcn.Layer
		bytes int64
	}{{"gcn", gcn.GCNLayer, 2}, {"sage", gcn.SAGELayer, 2}, {"gat", gcn.GATLayer, 4}} {
		j := Job{N: n, NNZ: 21000, Features: f, Hidden: 16, Classes: 7, Layers: 2, Mode: gcn.FullGraph, EvalEvery: 1,
			Layer: c.layer, Heads: 2, OutputHeads: 1, ShardedLoad: true}
		f32 := CAGNETMemory(j, 8, 2)
		j.Precision = device.BF16
		mem := CAGNETMemory(j, 8, 2)
		if want := rows*f*c.bytes + 4*rows + 7*n; mem.Features != want {
			t.Errorf("%s: Features %d in bf16, want %d (%d bytes a feature)", c.name, mem.Features, want, c.bytes)
		}
		if want := rows*f*4 + 4*rows + 7*n; f32.Features != want {
			t.Errorf("%s: Features %d in float32, want %d", c.name, f32.Features, want)
		}
		j.Mode, j.BatchSize = gcn.MiniBatch, 200
		batch, full := CAGNETBatchMemory(j, 8, 2), CAGNETMemory(j, 8, 2)
		if got, want := batch.Features-full.Features, rows*f*c.bytes+8*rows; got != want {
			t.Errorf("%s: a batch's features take %d bytes, want %d", c.name, got, want)
		}
	}
	// Layer 0's copies: without dropout none (it packed one before, as
	// wide as the features), with dropout one in bfloat16 (a SAGE layer
	// kept a float32 one beside the packed copy before).
	j := Job{N: n, NNZ: 21000, Features: f, Hidden: 16, Classes: 7, Layers: 2, Mode: gcn.FullGraph, EvalEvery: 1,
		ShardedLoad: true, Precision: device.BF16, Layer: gcn.SAGELayer}
	nodrop := CAGNETMemory(j, 8, 2)
	j.Dropout = 0.5
	drop := CAGNETMemory(j, 8, 2)
	// Layer 0 keeps its output in bfloat16 (cagnet.KeepsOut), already
	// through layer 1's dropout, whose mask it records (a word a row):
	// layer 1 keeps no copy.
	want := 2*rows*f + 4*int64(cagnet.ScratchRows(int(rows), f))*f + 8*rows
	if got := drop.Activations - nodrop.Activations; got != want {
		t.Errorf("SAGE, dropout 0.5: %d more bytes of activations than without, want %d (layer 0's dropped copy and the scratch, the mask of layer 1's dropout)", got, want)
	}
}
