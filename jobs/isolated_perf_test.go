package jobs

import (
	"path/filepath"
	"testing"

	"scalegnn/method"
	"scalegnn/perfmodel"
	"scalegnn/plan"
)

// TestIsolatedBytesPredicted: the byte counters of an isolated run show
// only the gradient all-reduce, and per epoch they equal the performance
// model's prediction (CommBytes is one rank's; the metrics sum the ranks),
// for whole partitions and for batches, halo and induced, one partition
// per rank and in phases; the chunk loads' counter equals what the sweep
// schedule reads (the first partition in epoch 1, then the chunks each
// partition holds that the rank's previous one did not), and the distributed
// evaluation's bytes equal IsolatedEvalBytes on evaluated epochs and are
// 0 on the others.
func TestIsolatedBytesPredicted(t *testing.T) {
	if testing.Short() {
		t.Skip("trains Cora")
	}
	tmp := t.TempDir()
	for _, tc := range []struct {
		name, extra string
		workers     int
	}{
		{"whole-induced", "[grappa]\npartition = \"induced\"", 4},
		{"batches-halo", "batch_size = 12\n[grappa]\npartition = \"halo\"\nchunks = 5", 3},
		{"phases-induced", "batch_size = 12\n[grappa]\npartition = \"induced\"\npartitions = 6\nchunks = 7\nepochs_per_super_epoch = 2", 3},
		{"layerwise", "[grappa]\nevaluation = \"layerwise\"\nchunks = 5", 3},
		// T of GCN layers gathered in bfloat16, ranks with odd halfwords.
		{"layerwise-bf16", "precision = \"bf16\"\n[grappa]\nevaluation = \"layerwise\"\nchunks = 5", 3},
	} {
		cfg := isolatedConfig(t, "mode = \"isolated\"\n"+tc.extra, filepath.Join(tmp, tc.name))
		cfg.Grid.D = tc.workers
		gs, err := plan.EstimateGraphSize(cfg.Dataset)
		if err != nil {
			t.Fatal(err)
		}
		preds, err := perfmodel.PredictAll(plan.PerfJob(&cfg, gs), perfmodel.DefaultMachine(), perfmodel.Options{Ranks: tc.workers}, perfmodel.Choices{method.IsolatedPartitions: true})
		if err != nil {
			t.Fatal(err)
		}
		p := preds[0]
		if p.Algorithm != method.IsolatedPartitions || p.Grid != perfmodel.IsolatedGrid(tc.workers, cfg.Grappa.PartitionCount(tc.workers)) || !(p.Epoch > 0) || p.MemTotal <= 0 {
			t.Fatalf("%s: prediction %+v", tc.name, p)
		}
		_, ms := trainLocal(t, cfg)
		chunks := wantChunkBytes(t, cfg)
		evalBytes := plan.PerfJob(&cfg, gs).IsolatedEvalBytes(tc.workers)
		if cfg.Grappa.Layerwise() {
			evalBytes = plan.PerfJob(&cfg, gs).LayerwiseEvalBytes(tc.workers)
		}
		if evalBytes <= 0 {
			t.Fatalf("%s: %d evaluation bytes predicted on %d workers", tc.name, evalBytes, tc.workers)
		}
		for i, m := range ms {
			if m.DPBytes != int64(tc.workers)*p.CommBytes || m.PMMBytes != 0 || m.Comm3DBytes != 0 {
				t.Errorf("%s epoch %d: dp %d, pmm %d, 3d %d bytes over %d ranks; predicted %d per rank, only the gradient all-reduce",
					tc.name, m.Epoch, m.DPBytes, m.PMMBytes, m.Comm3DBytes, tc.workers, p.CommBytes)
			}
			if m.ChunkBytes != chunks[i] || chunks[0] == 0 {
				t.Errorf("%s epoch %d: chunk loads read %d bytes; the schedule says %d", tc.name, m.Epoch, m.ChunkBytes, chunks[i])
			}
			want := int64(0)
			if m.TestAcc != nil {
				want = evalBytes
			}
			if m.EvalBytes != want {
				t.Errorf("%s epoch %d: evaluation handed %d bytes to collectives; predicted %d (IsolatedEvalBytes, LayerwiseEvalBytes)", tc.name, m.Epoch, m.EvalBytes, want)
			}
		}
	}
}
