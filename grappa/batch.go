package grappa

import (
	"fmt"
	"slices"

	"scalegnn/spmm"
)

// Batch is what one step with batch_size > 0 trains: the batch, given as
// indices into p.Train (ascending, distinct), closed under hops hops inside
// the partition, so that each batch vertex's k-layer output is the one the
// whole partition would give it and no vertex outside the partition is
// read. Its Train are the batch vertices; Degrees of it are their degrees
// in the partition (hops ≥ 1 keeps every partition neighbor), so the
// correction factor of a batch is the factor of eq. 10 with S_D the batch.
func (p Partition) Batch(adj *spmm.CSR, batch []int32, hops int) Partition {
	if hops < 1 {
		panic(fmt.Sprintf("grappa: Batch with %d hops; a model has at least one layer", hops))
	}
	in := func(v int32) bool { _, ok := slices.BinarySearch(p.Verts, v); return ok }
	seen := make(map[int32]bool, 4*len(batch))
	frontier := make([]int32, 0, len(batch))
	for i, b := range batch {
		if b < 0 || int(b) >= len(p.Train) || (i > 0 && b <= batch[i-1]) {
			panic(fmt.Sprintf("grappa: batch index %d at %d: want ascending distinct indices into %d training vertices", b, i, len(p.Train)))
		}
		v := p.Verts[p.Train[b]]
		seen[v] = true
		frontier = append(frontier, v)
	}
	for h := 0; h < hops && len(frontier) > 0; h++ {
		var next []int32
		for _, v := range frontier {
			for _, u := range adj.ColIdx[adj.RowPtr[v]:adj.RowPtr[v+1]] {
				if !seen[u] && in(u) {
					seen[u] = true
					next = append(next, u)
				}
			}
		}
		frontier = next
	}
	var out Partition
	out.Verts = make([]int32, 0, len(seen))
	for v := range seen {
		out.Verts = append(out.Verts, v)
	}
	slices.Sort(out.Verts)
	out.Train = make([]int32, len(batch))
	for i, b := range batch {
		j, _ := slices.BinarySearch(out.Verts, p.Verts[p.Train[b]])
		out.Train[i] = int32(j)
	}
	return out
}
