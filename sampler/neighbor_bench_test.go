package sampler

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"scalegnn/dataset"
	"scalegnn/spmm"
)

// benchGraph is the R-MAT graph of the sampling benchmark, built once:
// 2^20 vertices, Graph500 parameters, edge factor 16 (about 30M stored
// edges after symmetrising), one feature column to keep memory small.
var benchGraph = sync.OnceValues(func() (*spmm.CSR, error) {
	cfg := dataset.DefaultRMATConfig(20)
	cfg.Features = 1
	g, err := dataset.RMAT(cfg)
	if err != nil {
		return nil, err
	}
	return g.Adj, nil
})

// BenchmarkNeighborSampler times the fused sampler (SampleInto) against
// the unfused one (SampleUnfusedInto) on the same steps of the same run:
// 1024 seeds per step, fanouts [15, 10, 5], on 1 thread and on
// GOMAXPROCS. It reports each one's milliseconds per step, the speedup
// (unfused/fused; FastSample reports about 2×) and the sampled edges per
// step. The two alternate which goes first, so neither always finds the
// other's data in cache.
func BenchmarkNeighborSampler(b *testing.B) {
	adj, err := benchGraph()
	if err != nil {
		b.Fatal(err)
	}
	const batch = 1024
	fanouts := []int{15, 10, 5}
	for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("rmat20-seeds%d-threads=%d", batch, threads), func(b *testing.B) {
			s := NewNeighborSampler(adj, fanouts, NeighborOptions{Threads: threads})
			defer s.Close()
			var fused, unfused MFGs
			seeds := make([]int32, batch)
			var scratch UniformScratch
			step := func(i int) (tf, tu time.Duration) {
				UniformInto(seeds, &scratch, 1, 0, i, adj.Rows, batch)
				key := Key{Seed: 1, Step: i}
				f := func() { t0 := time.Now(); s.SampleInto(&fused, seeds, key); tf = time.Since(t0) }
				u := func() { t0 := time.Now(); s.SampleUnfusedInto(&unfused, seeds, key); tu = time.Since(t0) }
				if i%2 == 0 {
					f()
					u()
				} else {
					u()
					f()
				}
				return tf, tu
			}
			for i := range 3 { // grow the MFGs and scratch
				step(-1 - i)
			}
			var tf, tu time.Duration
			var edges int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f, u := step(i)
				tf += f
				tu += u
				for l := range fused.Layers {
					edges += fused.Layers[l].A.RowPtr[fused.Layers[l].A.Rows]
				}
			}
			n := float64(b.N)
			b.ReportMetric(tf.Seconds()*1e3/n, "fused_ms/step")
			b.ReportMetric(tu.Seconds()*1e3/n, "unfused_ms/step")
			b.ReportMetric(tu.Seconds()/tf.Seconds(), "speedup")
			b.ReportMetric(float64(edges)/n, "edges/step")
			b.ReportMetric(float64(len(fused.Input())), "input_vertices")
		})
	}
}
