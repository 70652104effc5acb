package sampler_test

import (
	"fmt"

	"scalegnn/sampler"
	"scalegnn/spmm"
)

// A neighbor-mode training loop samples the next step's MFGs in the
// Prefetcher's goroutine while the current step trains. Each rank takes
// its own seeds for the step; the key carries no rank, so a vertex two
// ranks both reach draws the same neighbors on both.
func ExampleNeighborSampler_prefetch() {
	// A ring of 8 vertices: vertex v's neighbors are v-1 and v+1.
	n := 8
	adj := &spmm.CSR{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	for v := range n {
		l, r := int32((v+n-1)%n), int32((v+1)%n)
		adj.ColIdx = append(adj.ColIdx, min(l, r), max(l, r))
		adj.RowPtr[v+1] = int64(len(adj.ColIdx))
	}
	s := sampler.NewNeighborSampler(adj, []int{2, 1}, sampler.NeighborOptions{})
	defer s.Close()

	rank, ranks := 1, 2
	const seed = 42
	build := func(step int, dst *sampler.MFGs) error {
		// This rank's seeds for the step (here: every ranks-th vertex).
		var seeds []int32
		for v := (step + rank) % ranks; v < n; v += ranks {
			seeds = append(seeds, int32(v))
		}
		s.SampleInto(dst, seeds, sampler.Key{Seed: seed, Step: step})
		return nil
	}
	p := sampler.NewPrefetcher(func() *sampler.MFGs { return new(sampler.MFGs) }, build, 0, true)
	defer p.Close()
	for range 2 {
		b, _, _, err := p.Next()
		if err != nil {
			panic(err)
		}
		// Fetch the features of b.Input(), run layer l on b.Layers[l].A ...
		last := &b.Layers[len(b.Layers)-1]
		fmt.Printf("seeds %v: %d sampled edges in the last layer, %d input vertices\n",
			b.Seeds(), last.A.NNZ(), len(b.Input()))
		p.Release(b)
	}
	// Output:
	// seeds [1 3 5 7]: 4 sampled edges in the last layer, 8 input vertices
	// seeds [0 2 4 6]: 4 sampled edges in the last layer, 8 input vertices
}
