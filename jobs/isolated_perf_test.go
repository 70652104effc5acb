package jobs

import (
	"path/filepath"
	"testing"

	"scalegnn/perfmodel"
)

// TestIsolatedBytesPredicted: the byte counters of an isolated run show
// only the gradient all-reduce, and per epoch they equal the performance
// model's prediction (CommBytes is one rank's; the metrics sum the ranks),
// for whole partitions and for batches, halo and induced.
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
	} {
		cfg := isolatedConfig(t, "mode = \"isolated\"\n"+tc.extra, filepath.Join(tmp, tc.name))
		cfg.Grid.D = tc.workers
		gs, err := EstimateGraphSize(cfg.Dataset)
		if err != nil {
			t.Fatal(err)
		}
		preds, err := perfmodel.PredictAll(PerfJob(&cfg, gs), perfmodel.DefaultMachine(), perfmodel.Options{Ranks: tc.workers}, perfmodel.Choices{Isolated: true})
		if err != nil {
			t.Fatal(err)
		}
		p := preds[0]
		if p.Algorithm != perfmodel.AlgorithmIsolated || p.Grid != perfmodel.IsolatedGrid(tc.workers) || !(p.Epoch > 0) || p.MemTotal <= 0 {
			t.Fatalf("%s: prediction %+v", tc.name, p)
		}
		_, ms := trainLocal(t, cfg)
		for _, m := range ms {
			if m.DPBytes != int64(tc.workers)*p.CommBytes || m.PMMBytes != 0 || m.Comm3DBytes != 0 {
				t.Errorf("%s epoch %d: dp %d, pmm %d, 3d %d bytes over %d ranks; predicted %d per rank, only the gradient all-reduce",
					tc.name, m.Epoch, m.DPBytes, m.PMMBytes, m.Comm3DBytes, tc.workers, p.CommBytes)
			}
		}
	}
}
