package neighbor

import (
	"fmt"

	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/spmm"
)

// Graph is what one rank holds under hybrid partitioning: the whole
// topology, labels and split masks (small next to the features), and
// only its own row block of the input features.
type Graph struct {
	N, F, Classes int
	// Hat is the GCN-normalised adjacency Â (self loops included), the
	// full-graph operator of a GCN layer and of evaluation.
	Hat *spmm.CSR
	// Topo is Â without its diagonal: row v lists v's neighbours, with
	// the weights Â_vu. The sampler draws from its rows.
	Topo *spmm.CSR
	// SelfW[v] is Â_vv = 1/(d_v+1).
	SelfW []float32

	Labels           []int32
	Train, Val, Test []bool

	// Ranks and Rank place this rank in the hybrid partition: it owns the
	// features of vertices [V0, V1) = Block(N, Ranks, Rank), row-major in
	// Features, or in FeaturesB rounded to bfloat16 in mixed precision
	// (features_bf16.go): one of the two is nil.
	Ranks, Rank int
	V0, V1      int
	Features    []float32
	FeaturesB   []uint16
	// featHash is FeatureHash's value for FeaturesB, hashed from the
	// float32 features as they were read.
	featHash int64
}

// Owner returns the rank that holds vertex v's features when n vertices
// are split over ranks: the one rule of the hybrid partition.
func Owner(n, ranks int, v int32) int { return grid.Owner(n, ranks, int(v)) }

// OwnedBlock returns the vertices [lo, hi) whose features rank owns.
func OwnedBlock(n, ranks, rank int) (lo, hi int) { return grid.Block(n, ranks, rank) }

// Owner returns the rank that holds v's features.
func (g *Graph) Owner(v int32) int { return Owner(g.N, g.Ranks, v) }

// Load reads rank's part of a source: the whole normalised adjacency,
// every label and mask, and the features of its own block, in bfloat16
// when bf16 (gcn.FeaturesInBF16, the one rule). Vertex ids are positions
// in the source's first vertex order (the identity without a
// permutation).
func Load(src gcn.Source, classes, rank, ranks int, bf16 bool) (*Graph, error) {
	s := src.Sizes()
	hat, err := src.AdjBlock(0, 0, s.N, 0, 0, s.N)
	if err != nil {
		return nil, err
	}
	labels, train, val, test, err := src.Labels(0, 0, s.N)
	if err != nil {
		return nil, err
	}
	lo, hi := OwnedBlock(s.N, ranks, rank)
	if bf16 {
		return loadBF16(src, hat, labels, train, val, test, rank, ranks, lo, hi)
	}
	feats, err := src.FeatureBlock(0, lo, hi, 0, s.Features)
	if err != nil {
		return nil, err
	}
	return newGraph(hat, s.Features, s.Classes, feats, nil, labels, train, val, test, rank, ranks)
}

// NewGraph builds rank's Graph from a whole graph in memory: hat is Â
// (dataset.NormalizeGCN), features N×f row-major.
func NewGraph(hat *spmm.CSR, f, classes int, features []float32, labels []int32, train, val, test []bool, rank, ranks int) (*Graph, error) {
	lo, hi := OwnedBlock(hat.Rows, ranks, rank)
	return newGraph(hat, f, classes, features[lo*f:hi*f], nil, labels, train, val, test, rank, ranks)
}

// newGraph builds rank's Graph on its feature block, block in float32 or
// blockB in bfloat16 (the other nil).
func newGraph(hat *spmm.CSR, f, classes int, block []float32, blockB []uint16, labels []int32, train, val, test []bool, rank, ranks int) (*Graph, error) {
	n := hat.Rows
	g := &Graph{N: n, F: f, Classes: classes, Hat: hat, Labels: labels, Train: train, Val: val, Test: test, Ranks: ranks, Rank: rank, Features: block, FeaturesB: blockB}
	g.V0, g.V1 = OwnedBlock(n, ranks, rank)
	if got := len(block) + len(blockB); got != (g.V1-g.V0)*f {
		return nil, fmt.Errorf("neighbor: rank %d's feature block has %d values; expected %d rows × %d features", rank, got, g.V1-g.V0, f)
	}
	topo := &spmm.CSR{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	topo.ColIdx = make([]int32, 0, hat.NNZ()-n)
	topo.Val = make([]float32, 0, hat.NNZ()-n)
	g.SelfW = make([]float32, n)
	for v := 0; v < n; v++ {
		diag := false
		for p := hat.RowPtr[v]; p < hat.RowPtr[v+1]; p++ {
			if int(hat.ColIdx[p]) == v {
				g.SelfW[v], diag = hat.Val[p], true
				continue
			}
			topo.ColIdx = append(topo.ColIdx, hat.ColIdx[p])
			topo.Val = append(topo.Val, hat.Val[p])
		}
		if !diag {
			return nil, fmt.Errorf("neighbor: row %d of the normalised adjacency has no diagonal entry; expected Â = D^-1/2 (A+I) D^-1/2 (dataset.NormalizeGCN)", v)
		}
		topo.RowPtr[v+1] = int64(len(topo.ColIdx))
	}
	g.Topo = topo
	return g, nil
}

// Degree returns v's degree without its self loop.
func (g *Graph) Degree(v int32) int { return int(g.Topo.RowPtr[v+1] - g.Topo.RowPtr[v]) }

// MaxDegree returns the largest degree.
func (g *Graph) MaxDegree() int {
	d := 0
	for v := range g.N {
		d = max(d, g.Degree(int32(v)))
	}
	return d
}

// weight returns Â_vu for a neighbour u of v (binary search in v's row).
func (g *Graph) weight(v, u int32) float32 {
	lo, hi := g.Topo.RowPtr[v], g.Topo.RowPtr[v+1]
	for lo < hi {
		mid := (lo + hi) / 2
		if g.Topo.ColIdx[mid] < u {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == g.Topo.RowPtr[v+1] || g.Topo.ColIdx[lo] != u {
		panic(fmt.Sprintf("neighbor: %d is not a neighbour of %d", u, v))
	}
	return g.Topo.Val[lo]
}
