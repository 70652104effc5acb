package jobs

import (
	"fmt"

	"scalegnn/gcn"
	"scalegnn/grappa"
	"scalegnn/grid"
	"scalegnn/spmm"
)

// isoPart is one loaded partition: its vertex set over the graph held in
// memory, or (grappa.out_of_core) its shards read from the source; and
// the degrees of its training vertices in it and in the whole graph
// (grappa.Degrees), from which its correction factor comes.
type isoPart struct {
	grappa.Partition
	sh            *gcn.Shards
	local, global []int
}

// chunkReader reads an induced partition straight from the job's source
// (grappa.out_of_core): with C chunks that are the row blocks of the
// vertex order (grappa.SplitOrder), chunks b and x are positions
// grid.Block(N, C, b) and (N, C, x), and their induced subgraph is four
// adjacency blocks, two feature blocks and two blocks of labels. A
// prepared dataset with C blocks reads exactly those files; with another
// block count, the files overlapping them. The whole graph's shards and
// structure are never built: a worker holds the O(N) orders, the
// partitions in use and the one being prefetched.
type chunkReader struct {
	src      gcn.Source
	g        *grid.Grid
	cfg      gcn.Config
	n, c     int
	degrees  bool // the correction needs the training vertices' degrees
	features int
	// bf16 rounds a partition's features to bfloat16 (featuresBF16).
	bf16 bool
}

// featureBytes is the bytes a feature of src takes where it is read from:
// the prepared dataset's (2 for bfloat16), else 4.
func featureBytes(src gcn.Source) int64 {
	if d, ok := src.(interface{ FeatureBytes() int }); ok {
		return int64(d.FeatureBytes())
	}
	return 4
}

// read is the Loader's build: the partition of chunks base and swept and
// the bytes it read (8 per row pointer and per entry, 4 per feature (2
// from a bfloat16 prepared dataset), 5 per label and split).
func (r *chunkReader) read(base, swept int) (isoPart, int64, error) {
	blocks := []int{min(base, swept)}
	if swept != base {
		blocks = append(blocks, max(base, swept))
	}
	var pos []int32
	off := make([]int32, len(blocks)) // the first local position of each block
	for k, b := range blocks {
		lo, hi := grid.Block(r.n, r.c, b)
		off[k] = int32(len(pos))
		for p := lo; p < hi; p++ {
			pos = append(pos, int32(p))
		}
	}
	n := len(pos)
	// The four adjacency blocks first, so that the partition's arrays are
	// allocated once at their size.
	adj := make([][]*spmm.CSR, len(blocks))
	var nnz int64
	var bytes int64
	for k, b := range blocks {
		r0, r1 := grid.Block(r.n, r.c, b)
		adj[k] = make([]*spmm.CSR, len(blocks))
		for j, c := range blocks {
			c0, c1 := grid.Block(r.n, r.c, c)
			a, err := r.src.AdjBlock(0, r0, r1, 0, c0, c1)
			if err != nil {
				return isoPart{}, 0, fmt.Errorf("reading chunks %d and %d: %w", base, swept, err)
			}
			adj[k][j] = a
			nnz += int64(a.NNZ())
			bytes += 8*int64(r1-r0+1) + 8*int64(a.NNZ())
		}
	}
	sub := &gcn.Graph{Adj: &spmm.CSR{Rows: n, Cols: n, RowPtr: make([]int64, n+1), ColIdx: make([]int32, 0, nnz), Val: make([]float32, 0, nnz)},
		Classes: r.cfg.Classes, Features: make([]float32, 0, n*r.features),
		Labels: make([]int32, 0, n), Train: make([]bool, 0, n), Val: make([]bool, 0, n), Test: make([]bool, 0, n)}
	for k, b := range blocks {
		r0, r1 := grid.Block(r.n, r.c, b)
		// Row i of the partition: its entries in each column block, the
		// lower block's first, at that block's local offset.
		for i := range r1 - r0 {
			for j, a := range adj[k] {
				for e := a.RowPtr[i]; e < a.RowPtr[i+1]; e++ {
					sub.Adj.ColIdx = append(sub.Adj.ColIdx, a.ColIdx[e]+off[j])
					sub.Adj.Val = append(sub.Adj.Val, a.Val[e])
				}
			}
			sub.Adj.RowPtr[int(off[k])+i+1] = int64(len(sub.Adj.ColIdx))
		}
		adj[k] = nil
		x, err := r.src.FeatureBlock(1, r0, r1, 0, r.features)
		if err != nil {
			return isoPart{}, 0, fmt.Errorf("reading chunks %d and %d: %w", base, swept, err)
		}
		lab, tr, va, te, err := r.src.Labels(0, r0, r1)
		if err != nil {
			return isoPart{}, 0, fmt.Errorf("reading chunks %d and %d: %w", base, swept, err)
		}
		sub.Features = append(sub.Features, x...)
		sub.Labels, sub.Train = append(sub.Labels, lab...), append(sub.Train, tr...)
		sub.Val, sub.Test = append(sub.Val, va...), append(sub.Test, te...)
		bytes += int64(r1-r0) * (featureBytes(r.src)*int64(r.features) + 5)
	}
	sh, err := gcn.NewSubgraphShards(r.g, r.cfg, r.src.Orders(), pos, sub)
	if err != nil {
		return isoPart{}, 0, fmt.Errorf("chunks %d and %d: %w", base, swept, err)
	}
	if r.bf16 {
		sh.FeaturesToBF16(r.g, r.cfg)
	}
	p := isoPart{sh: sh}
	for i, t := range sub.Train {
		if t {
			p.Train = append(p.Train, int32(i))
		}
	}
	if r.degrees {
		if p.local, p.global, err = subgraphDegrees(sub.Adj, p.Train, sh.Orders.Order[0]); err != nil {
			return isoPart{}, 0, err
		}
	}
	return p, bytes, nil
}

// subgraphDegrees is grappa.Degrees of the training rows train of an
// induced partition's Â, without the whole graph: the degree in the
// partition counts the row's entries off the diagonal, plus one; the
// degree in the graph is 1/Â_vv, since Â_vv = 1/(d_v + 1) for a binary
// graph without self loops (the degrees SAGE reads the same way). ids
// name the rows in the error a weighted graph gets.
func subgraphDegrees(a *spmm.CSR, train []int32, ids []int32) (local, global []int, err error) {
	local, global = make([]int, len(train)), make([]int, len(train))
	for k, i := range train {
		l, hat := 1, float32(0)
		for e := a.RowPtr[i]; e < a.RowPtr[i+1]; e++ {
			if a.ColIdx[e] == i {
				hat = a.Val[e]
			} else {
				l++
			}
		}
		d, ok := gcn.DegreeFromDiagonal(hat)
		if !ok || d+1 < l {
			return nil, nil, fmt.Errorf("vertex %d: normalised adjacency has diagonal %g, not 1/(degree+1) of a binary graph; grappa.out_of_core reads degrees from it for the correction: set grappa.correction = \"none\" for a weighted graph", ids[i], hat)
		}
		local[k], global[k] = l, d+1
	}
	return local, global, nil
}
