package jobs

import (
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/dataset"
	"scalegnn/jobfile"
	"scalegnn/permute"
	"scalegnn/prepared"
	"scalegnn/record"
	"scalegnn/spmm"
)

// TestPreparedBF16TrainsLikeRounded: a job on a prepared dataset with
// bfloat16 features (prepare -dtype bf16) trains exactly as the same job
// on a float32 prepared dataset of the graph with its features rounded to
// bfloat16 first (spmm.RoundBF16; an SBM graph, whose Gaussian features
// the rounding changes), which TestPreparedTrainsLikeInMemory ties to the
// graph in memory: loss every epoch and accuracies bit for bit, through
// the 3D shards, CAGNET's 1.5D blocks, neighbor sampling, and isolated
// training out of core with either evaluation (the layer-wise one reads
// feature strips, package infer). Out of core, the bf16 dataset's
// partitions count 2 bytes a feature read instead of 4.
func TestPreparedBF16TrainsLikeRounded(t *testing.T) {
	sc := dataset.DefaultSBMConfig(800)
	sc.Features = 24
	g0, err := dataset.SBM(sc)
	if err != nil {
		t.Fatal(err)
	}
	g := g0
	rounded := *g
	rounded.Features = make([]float32, len(g.Features))
	changed := 0
	for i, x := range g.Features {
		rounded.Features[i] = spmm.RoundBF16(x)
		if rounded.Features[i] != x {
			changed++
		}
	}
	if changed < len(g.Features)/2 {
		t.Fatalf("only %d of %d features change when rounded to bf16: the test would not see the rounding", changed, len(g.Features))
	}
	for _, c := range []struct {
		name   string
		scheme permute.Scheme
		blocks int
		extra  string
		grid   jobfile.GridConfig
		norm   bool
	}{
		{"3D", permute.Double, 3, "", jobfile.GridConfig{X: 2, Y: 1, Z: 2, D: 1}, true},
		{"cagnet", permute.Single, 3, "algorithm = \"1.5d\"", jobfile.GridConfig{X: 2, Y: 1, Z: 1, D: 1, Replication: 1}, true},
		{"neighbor", permute.Single, 2, "mode = \"neighbor\"\nfanouts = [5, 5]\nbatch_size = 20", jobfile.GridConfig{X: 1, Y: 1, Z: 1, D: 2}, false},
		{"isolated out of core", permute.Single, 2, "mode = \"isolated\"\n[grappa]\npartitions = 2\nchunks = 2\nsplit = \"blocks\"\nout_of_core = true", jobfile.GridConfig{X: 1, Y: 1, Z: 1, D: 1}, false},
		{"isolated out of core, layer-wise evaluation", permute.Single, 2, "mode = \"isolated\"\n[grappa]\npartitions = 2\nchunks = 2\nsplit = \"blocks\"\nout_of_core = true\nevaluation = \"layerwise\"", jobfile.GridConfig{X: 1, Y: 1, Z: 1, D: 1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			type run struct {
				g     *dataset.Graph
				dtype string
				dir   string
			}
			var res [2]*record.Result
			var ms [2][]record.EpochMetrics
			for k, r := range []run{{&rounded, "", "rounded-f32"}, {g, prepared.FeaturesBF16, "bf16"}} {
				dir := filepath.Join(tmp, r.dir)
				if _, err := prepared.Prepare(&prepared.GraphInput{G: r.g}, dir, prepared.Options{Blocks: c.blocks, Scheme: c.scheme, Seed: 5, FeatureDType: r.dtype}); err != nil {
					t.Fatal(err)
				}
				cfg := isolatedConfig(t, c.extra, filepath.Join(tmp, "out-"+r.dir))
				cfg.Train.Epochs = 3
				cfg.Grid, cfg.Permute = c.grid, jobfile.PermuteConfig{Scheme: c.scheme, Seed: 5}
				cfg.Dataset.Source, cfg.Dataset.Path, cfg.Dataset.NormalizeFeatures = jobfile.SourcePrepared, dir, c.norm
				res[k], ms[k] = trainLocal(t, cfg)
			}
			want, got := res[0], res[1]
			if got.FinalLoss != want.FinalLoss || got.Final != want.Final {
				t.Fatalf("bf16 dataset: loss %v, accuracy %+v; rounded float32: loss %v, accuracy %+v", got.FinalLoss, got.Final, want.FinalLoss, want.Final)
			}
			if len(ms[0]) != 3 || len(ms[1]) != 3 {
				t.Fatalf("%d and %d epochs of metrics, want 3", len(ms[0]), len(ms[1]))
			}
			for e := range ms[0] {
				w, g := ms[0][e], ms[1][e]
				if w.Loss != g.Loss {
					t.Fatalf("epoch %d: loss %v from the bf16 dataset, %v from the rounded float32 one", e+1, g.Loss, w.Loss)
				}
				// Every row read is 2·F bytes less; the adjacency, labels
				// and splits are the same bytes.
				if d := w.ChunkBytes - g.ChunkBytes; d < 0 || d%int64(2*g0.F) != 0 || (w.ChunkBytes > 0) != (d > 0) {
					t.Errorf("epoch %d: %d chunk bytes read from the rounded float32 dataset, %d from the bf16 one: expected fewer by 2 bytes a feature", e+1, w.ChunkBytes, g.ChunkBytes)
				}
				if strings.HasPrefix(c.name, "isolated") && w.ChunkBytes == 0 {
					t.Errorf("epoch %d: no chunk bytes", e+1)
				}
			}
		})
	}
}
