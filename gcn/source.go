package gcn

import (
	"fmt"
	"slices"

	"scalegnn/spmm"
)

// Source is where NewShards reads one rank's blocks of the graph from. Rows
// and columns are positions in one of the two vertex orders of Orders (k = 0
// is p1, k = 1 is p2 of double permutation; docs/architecture.md, "Layouts"). MemorySource cuts blocks from a graph
// held whole in memory; a prepared dataset on disk reads only the files
// overlapping the requested block.
type Source interface {
	// Sizes returns the graph's vertices, feature width and classes: what
	// a model for it is built with (Config.Features, Config.Classes).
	Sizes() Sizes
	// Orders returns the vertex orders the positions refer to.
	Orders() *Orders
	// AdjBlock returns the block of the normalised adjacency Â with rows at
	// positions [r0, r1) of order rowOrder and columns at positions [c0, c1)
	// of order colOrder, with local column indices sorted within each row.
	AdjBlock(rowOrder, r0, r1, colOrder, c0, c1 int) (*spmm.CSR, error)
	// FeatureBlock returns the features of the vertices at positions
	// [r0, r1) of order, columns [c0, c1), row-major.
	FeatureBlock(order, r0, r1, c0, c1 int) ([]float32, error)
	// Labels returns the labels and split masks of the vertices at
	// positions [r0, r1) of order.
	Labels(order, r0, r1 int) (labels []int32, train, val, test []bool, err error)
}

// SourceInto is a Source that decodes its blocks straight into memory the
// caller provides instead of allocating it: NewShards sizes each array
// (AdjBlockNNZ; rows × columns of a feature block), allocates it where the
// shard is to live and has the source fill it, so that loading holds no
// second copy. The host slices of Shards are that memory today; a device
// arena's buffers can be, with no change to the sources.
type SourceInto interface {
	Source
	// AdjBlockNNZ is the number of nonzeros of the block AdjBlock returns.
	AdjBlockNNZ(rowOrder, r0, r1, colOrder, c0, c1 int) (int64, error)
	// AdjBlockInto writes the block AdjBlock returns into dst: RowPtr of
	// r1-r0+1 entries, ColIdx and Val of AdjBlockNNZ entries.
	AdjBlockInto(dst *spmm.CSR, rowOrder, r0, r1, colOrder, c0, c1 int) error
	// FeatureBlockInto writes FeatureBlock's values into dst, which holds
	// (r1-r0)·(c1-c0) of them.
	FeatureBlockInto(dst []float32, order, r0, r1, c0, c1 int) error
	// Mirrored reports that blocks with rows in rowOrder and columns in
	// colOrder are not stored but are the transposes of their mirrors
	// (rows in colOrder, columns in rowOrder) of a symmetric Â: a caller
	// needing a block and its transpose reads the mirror and transposes it
	// once.
	Mirrored(rowOrder, colOrder int) bool
}

// Sizes are the dimensions of a Source's graph.
type Sizes struct {
	// N is the number of vertices, Features the input width and Classes
	// the number of label classes.
	N, Features, Classes int
}

// MemorySource is a Source over a graph held whole in memory.
type MemorySource struct {
	g *Graph
	o *Orders
	f int
	c int
}

var _ Source = (*MemorySource)(nil)

// NewMemorySource checks that the parts of g agree in size and returns a
// Source over it in the orders o.
func NewMemorySource(g *Graph, o *Orders) (*MemorySource, error) {
	n := g.Adj.Rows
	if g.Adj.Cols != n || len(g.Labels) != n || len(g.Train) != n || len(g.Val) != n || len(g.Test) != n ||
		(n > 0 && len(g.Features)%n != 0) {
		return nil, fmt.Errorf("gcn: graph of %d×%d adjacency, %d feature values, %d labels and masks %d/%d/%d (want %d each)",
			g.Adj.Rows, g.Adj.Cols, len(g.Features), len(g.Labels), len(g.Train), len(g.Val), len(g.Test), n)
	}
	if len(o.Order[0]) != n {
		return nil, fmt.Errorf("gcn: vertex orders of length %d for %d vertices", len(o.Order[0]), n)
	}
	f := 0
	if n > 0 {
		f = len(g.Features) / n
	}
	c := g.Classes
	if c == 0 {
		for _, l := range g.Labels {
			c = max(c, int(l)+1)
		}
	}
	return &MemorySource{g: g, o: o, f: f, c: c}, nil
}

func (s *MemorySource) Sizes() Sizes    { return Sizes{N: s.g.Adj.Rows, Features: s.f, Classes: s.c} }
func (s *MemorySource) Orders() *Orders { return s.o }

func (s *MemorySource) AdjBlock(rowOrder, r0, r1, colOrder, c0, c1 int) (*spmm.CSR, error) {
	return extractBlock(s.g.Adj, s.o.Order[rowOrder][r0:r1], s.o.inv[colOrder], c0, c1), nil
}

func (s *MemorySource) FeatureBlock(order, r0, r1, c0, c1 int) ([]float32, error) {
	if c1 > s.f {
		return nil, fmt.Errorf("gcn: feature columns [%d, %d) of a graph with %d features", c0, c1, s.f)
	}
	x := make([]float32, 0, (r1-r0)*(c1-c0))
	for _, v := range s.o.Order[order][r0:r1] {
		row := s.g.Features[int(v)*s.f:]
		x = append(x, row[c0:c1]...)
	}
	return x, nil
}

func (s *MemorySource) Labels(order, r0, r1 int) ([]int32, []bool, []bool, []bool, error) {
	g := s.g
	var lab []int32
	var tr, va, te []bool
	for _, v := range s.o.Order[order][r0:r1] {
		lab = append(lab, g.Labels[v])
		tr = append(tr, g.Train[v])
		va = append(va, g.Val[v])
		te = append(te, g.Test[v])
	}
	return lab, tr, va, te, nil
}

// extractBlock returns the block of Â with rows rowVerts (the vertices of
// the block's rows, in order) and columns at positions [c0, c1) of the order
// whose inverse is colInv, with local column indices.
func extractBlock(adj *spmm.CSR, rowVerts []int32, colInv []int32, c0, c1 int) *spmm.CSR {
	b := &spmm.CSR{Rows: len(rowVerts), Cols: c1 - c0, RowPtr: make([]int64, len(rowVerts)+1)}
	type entry struct {
		c int32
		v float32
	}
	var row []entry
	for i, v := range rowVerts {
		row = row[:0]
		for p := adj.RowPtr[v]; p < adj.RowPtr[v+1]; p++ {
			j := int(colInv[adj.ColIdx[p]])
			if j >= c0 && j < c1 {
				row = append(row, entry{int32(j - c0), adj.Val[p]})
			}
		}
		slices.SortFunc(row, func(x, y entry) int { return int(x.c - y.c) })
		for _, e := range row {
			b.ColIdx = append(b.ColIdx, e.c)
			b.Val = append(b.Val, e.v)
		}
		b.RowPtr[i+1] = int64(len(b.ColIdx))
	}
	return b
}
