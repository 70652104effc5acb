package grappa

import (
	"fmt"
	"math/rand/v2"
	"sort"
)

// Chunks is the one-time split of n vertices into C chunks (§3.3): Of[v] is
// vertex v's chunk and Members[c] lists chunk c's vertices in ascending
// order, so a partition's vertex list is a merge of two sorted lists.
type Chunks struct {
	Of      []int32
	Members [][]int32
}

// C is the number of chunks.
func (ch *Chunks) C() int { return len(ch.Members) }

// SplitRandom assigns n vertices to c chunks by a seeded random
// permutation cut into c near-equal runs, so chunk sizes differ by at most
// one (a worker's memory is set by its largest partition).
func SplitRandom(n, c int, seed uint64) (*Chunks, error) {
	if err := checkSplit(n, c); err != nil {
		return nil, err
	}
	perm := rand.New(rand.NewPCG(seed, 0x6772617070610000)).Perm(n)
	of := make([]int32, n)
	for i, v := range perm {
		of[v] = int32(blockOf(i, n, c))
	}
	return fromOf(of, c), nil
}

// SplitBlocks assigns n vertices to c contiguous near-equal blocks, the
// layout of a prepared dataset's row blocks: loading a chunk is then
// reading one contiguous row range.
func SplitBlocks(n, c int) (*Chunks, error) {
	if err := checkSplit(n, c); err != nil {
		return nil, err
	}
	of := make([]int32, n)
	for v := range of {
		of[v] = int32(blockOf(v, n, c))
	}
	return fromOf(of, c), nil
}

// SplitOrder assigns the vertices of order (a vertex order: order[i] is
// the vertex at position i) to c contiguous near-equal runs of positions,
// the row blocks of a prepared dataset whose order 0 is order: chunk c's
// adjacency and features are then the dataset's blocks of c when it was
// prepared with c blocks. With a random order the chunks are a random
// split, as SplitRandom's.
func SplitOrder(order []int32, c int) (*Chunks, error) {
	n := len(order)
	if err := checkSplit(n, c); err != nil {
		return nil, err
	}
	of := make([]int32, n)
	for i, v := range order {
		of[v] = int32(blockOf(i, n, c))
	}
	return fromOf(of, c), nil
}

func checkSplit(n, c int) error {
	if c < 1 || c > n {
		return fmt.Errorf("grappa: %d chunks for %d vertices; set grappa.chunks to between 1 and the vertex count", c, n)
	}
	return nil
}

// blockOf is the block of position i when n positions are cut into c runs
// whose sizes differ by at most one (the first n mod c runs are longer).
func blockOf(i, n, c int) int {
	q, r := n/c, n%c
	if i < r*(q+1) {
		return i / (q + 1)
	}
	return r + (i-r*(q+1))/q
}

func fromOf(of []int32, c int) *Chunks {
	m := make([][]int32, c)
	for v, k := range of {
		m[k] = append(m[k], int32(v))
	}
	for _, l := range m {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	}
	return &Chunks{Of: of, Members: m}
}
