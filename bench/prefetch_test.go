package bench

import (
	"fmt"
	"path/filepath"
	"testing"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/jobfile"
	"scalegnn/jobs"
	"scalegnn/record"
)

// prefetchJob is a 2^20-vertex R-MAT graph (8.4M generated edges) trained
// in mini-batches of 10% of the vertices, ten steps per epoch.
const prefetchJob = `
[dataset]
source = "rmat"
normalize_features = false
[dataset.rmat]
scale = 20
edge_factor = 8
features = 32
classes = 8
[model]
layers = 2
hidden = 32
dropout = 0.5
[train]
mode = "minibatch"
batch_ratio = 0.1
steps_per_epoch = 10
epochs = 2
eval_every = 1000
prefetch = %v
`

// BenchmarkMiniBatchPrefetch trains the same job with and without
// prefetching and reports the share of the training time (evaluation
// excluded) that steps spent waiting for their batch, and the time to build
// one batch.
func BenchmarkMiniBatchPrefetch(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("prefetch=%v", on), func(b *testing.B) {
			cfg, err := jobfile.ParseConfig("bench.toml", []byte(fmt.Sprintf(prefetchJob, on)))
			if err != nil {
				b.Fatal(err)
			}
			cfg.Output.Dir = b.TempDir()
			cfg.Output.Overwrite = true // every b.N iteration trains into the same directory
			world := collectives.NewLocalWorld(1)[0]
			job, err := jobs.Setup(cfg, world, device.NewCPU(2), zap.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			var wait, build, train float64
			steps := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := job.Train(); err != nil {
					b.Fatal(err)
				}
				ms, err := record.ReadMetrics(filepath.Join(cfg.Output.Dir, cfg.Output.Metrics))
				if err != nil {
					b.Fatal(err)
				}
				for _, m := range ms {
					wait += m.SampleWaitSecMax
					build += m.SampleSecMax
					train += m.EpochSec - m.EvalSec
					steps += m.Steps
				}
			}
			b.ReportMetric(100*wait/train, "wait_%")
			b.ReportMetric(1e3*train/float64(steps), "ms/step")
			b.ReportMetric(1e3*build/float64(steps), "build_ms/batch")
		})
	}
}
