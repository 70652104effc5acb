package grappa

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPartitionBatch checks a step's batch against a brute-force breadth-
// first search over the partition's induced subgraph: the batch's vertex
// set is exactly the partition vertices within hops hops of a batch vertex
// along paths inside the partition, its Train are the batch vertices, and
// their local degrees equal their degrees in the whole partition, so a
// batch's correction factor is eq. 10's for S_D = the batch.
func TestPartitionBatch(t *testing.T) {
	adj := randomGraph(60, 110, 5)
	train := make([]bool, 60)
	for v := range train {
		train[v] = v%3 != 0
	}
	ch, _ := SplitRandom(60, 4, 9)
	r := rand.New(rand.NewPCG(3, 4))
	for _, kind := range []Kind{Induced, Halo} {
		for _, hops := range []int{1, 2, 3} {
			p := Build(adj, ch, train, 0, 2, kind, hops)
			pl, _ := Degrees(adj, p)
			for trial := range 5 {
				var batch []int32
				for i := range p.Train {
					if r.IntN(3) == 0 {
						batch = append(batch, int32(i))
					}
				}
				b := p.Batch(adj, batch, hops)
				// Brute force: BFS with a distance array over the partition.
				inP := make([]bool, 60)
				for _, v := range p.Verts {
					inP[v] = true
				}
				dist := make([]int, 60)
				for i := range dist {
					dist[i] = -1
				}
				var q []int32
				for _, i := range batch {
					v := p.Verts[p.Train[i]]
					dist[v] = 0
					q = append(q, v)
				}
				for len(q) > 0 {
					v := q[0]
					q = q[1:]
					if dist[v] == hops {
						continue
					}
					for _, u := range adj.ColIdx[adj.RowPtr[v]:adj.RowPtr[v+1]] {
						if inP[u] && dist[u] < 0 {
							dist[u] = dist[v] + 1
							q = append(q, u)
						}
					}
				}
				var want []int32
				for v, d := range dist {
					if d >= 0 {
						want = append(want, int32(v))
					}
				}
				if !slices.Equal(b.Verts, want) {
					t.Fatalf("%v hops=%d trial %d: batch vertices %v, want %v", kind, hops, trial, b.Verts, want)
				}
				bl, bg := Degrees(adj, b)
				for i, k := range batch {
					if b.Verts[b.Train[i]] != p.Verts[p.Train[k]] {
						t.Fatalf("%v hops=%d: batch train %d is vertex %d, want %d", kind, hops, i, b.Verts[b.Train[i]], p.Verts[p.Train[k]])
					}
					if bl[i] != pl[k] || bg[i] < bl[i] {
						t.Errorf("%v hops=%d: batch vertex %d local degree %d (global %d), in the partition %d", kind, hops, i, bl[i], bg[i], pl[k])
					}
				}
			}
		}
	}
}
