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
// GOMAXPROCS. The unfused sampler runs twice: with the dense map it
// shares with the fused one, which isolates the COO and its conversion,
// and with a hash map (HashRelabel), as DGL's to_block relabels, which is
// what FastSample's about 2× was measured against. It reports each one's
// milliseconds per step, the two speedups (unfused/fused) and the sampled
// edges per step. The three rotate which goes first, so none always finds
// another's data in cache.
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
			hs := NewNeighborSampler(adj, fanouts, NeighborOptions{Threads: threads, HashRelabel: true})
			defer hs.Close()
			var fused, unfused, hashed MFGs
			seeds := make([]int32, batch)
			var scratch UniformScratch
			var took [3]time.Duration
			step := func(i int) {
				UniformInto(seeds, &scratch, 1, 0, i, adj.Rows, batch)
				key := Key{Seed: 1, Step: i}
				runs := [3]func(){
					func() { s.SampleInto(&fused, seeds, key) },
					func() { s.SampleUnfusedInto(&unfused, seeds, key) },
					func() { hs.SampleUnfusedInto(&hashed, seeds, key) },
				}
				for k := range runs {
					r := (k + i) % len(runs)
					t0 := time.Now()
					runs[r]()
					took[r] += time.Since(t0)
				}
			}
			for i := range 3 { // grow the MFGs and scratch on steps not timed
				step(1<<30 + i)
			}
			took = [3]time.Duration{}
			var edges int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				step(i)
				for l := range fused.Layers {
					edges += fused.Layers[l].A.RowPtr[fused.Layers[l].A.Rows]
				}
			}
			n := float64(b.N)
			b.ReportMetric(took[0].Seconds()*1e3/n, "fused_ms/step")
			b.ReportMetric(took[1].Seconds()*1e3/n, "unfused_ms/step")
			b.ReportMetric(took[2].Seconds()*1e3/n, "unfused_hash_ms/step")
			b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "speedup")
			b.ReportMetric(took[2].Seconds()/took[0].Seconds(), "speedup_vs_hash")
			b.ReportMetric(float64(edges)/n, "edges/step")
			b.ReportMetric(float64(len(fused.Input())), "input_vertices")
		})
	}
}
