package prepared

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
)

// BenchmarkLoadRank measures what one rank of a 2×2×2 grid spends loading
// its shards (gcn.NewShards over Open) of a 2-layer GCN, the setup step
// that README's "Datasets at scale" times at R-MAT scale 22. The dataset is
// an R-MAT graph of scale $SCALEGNN_BENCH_SCALE (default 14) prepared with
// double permutation and 8×8 blocks, or the prepared dataset at
// $SCALEGNN_BENCH_PREPARED; $SCALEGNN_BENCH_RANK picks the rank (default
// 0), so that 8 test binaries run side by side under /usr/bin/time -v
// give each rank's loading time and peak RSS without training. Run with
// -cpuprofile/-memprofile and -benchmem.
func BenchmarkLoadRank(b *testing.B) {
	dir := os.Getenv("SCALEGNN_BENCH_PREPARED")
	if dir == "" {
		scale := 14
		if s := os.Getenv("SCALEGNN_BENCH_SCALE"); s != "" {
			var err error
			if scale, err = strconv.Atoi(s); err != nil {
				b.Fatalf("SCALEGNN_BENCH_SCALE=%q: %v", s, err)
			}
		}
		dir = filepath.Join(b.TempDir(), "rmat")
		in := &RMATInput{Cfg: dataset.DefaultRMATConfig(scale)}
		if _, err := Prepare(in, dir, Options{Blocks: 8, Scheme: permute.Double, Seed: 7}); err != nil {
			b.Fatal(err)
		}
	}
	shape := grid.Shape{D: 1, X: 2, Y: 2, Z: 2}
	rank, _ := strconv.Atoi(os.Getenv("SCALEGNN_BENCH_RANK"))
	var bytes int64
	b.ResetTimer()
	for range b.N {
		for r, err := range collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
			g, err := grid.New(w, shape)
			if err != nil || w.Rank() != rank {
				return err
			}
			d, err := Open(dir, LoadOptions{NormalizeFeatures: true})
			if err != nil {
				return err
			}
			sz := d.Sizes()
			cfg := gcn.Config{Features: sz.Features, Classes: sz.Classes, Hidden: 16, Layers: 2}
			sh, err := gcn.NewShards(g, cfg, d)
			if err != nil {
				return err
			}
			bytes = sh.Bytes()
			return nil
		}) {
			if err != nil {
				b.Fatalf("rank %d: %v", r, err)
			}
		}
	}
	b.ReportMetric(float64(bytes)/(1<<20), "shardMiB")
}
