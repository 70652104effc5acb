package gcn

import (
	"fmt"

	"scalegnn/grid"
	"scalegnn/sampler"
	"scalegnn/spmm"
)

// BatchBuilder builds this rank's shards of mini-batch subgraphs from its
// full-graph shards (ScaleGNN Algorithm 2): every rank of a data-parallel
// group draws the same sample S of B vertices from (seed, group, step),
// keeps the sampled rows and columns of each adjacency shard, rescales the
// off-diagonal weights by 1/p (for SAGE's D^-1 A, every weight: see
// batchMeanRescale), and slices its features, labels and masks.
// No communication. The sampled rows stay in the row blocks of the full
// graph, so a batch's blocks are uneven (|S ∩ block| rows each).
//
// A BatchBuilder is not safe for concurrent use: one batch at a time (a
// Prefetcher builds them one after another in its goroutine).
type BatchBuilder struct {
	g     *grid.Grid
	cfg   Config
	full  *Shards
	seed  uint64
	b     int
	p     float64
	same  bool // the two vertex orders agree: one position list serves both
	group int

	shards []batchShard
	// feature block of the full shards: first row and width
	fr0, fw int

	// The sample being built and its generator's state: one batch at a
	// time.
	verts []int32
	draw  sampler.UniformScratch

	// Vertices, when set, replaces the uniform sample with a given batch
	// (isolated training: the worker's partition, sorted vertex ids) whose
	// weights are kept (p = 1), and LossMask, indexed by vertex id, then
	// marks the vertices whose loss it trains on.
	Vertices func(step int) []int32
	LossMask []bool
}

type batchShard struct {
	key            grid.Shard
	in, out        int // vertex orders of columns and rows
	colAxis        grid.Axis
	rowAxis        grid.Axis
	ex             *sampler.Extractor
	needsTranspose bool
}

// NewBatchBuilder returns a BatchBuilder over full, the shards the model
// was built on, for batches of b vertices drawn with seed by this rank's
// data-parallel group.
func NewBatchBuilder(g *grid.Grid, cfg Config, full *Shards, seed uint64, b int) (*BatchBuilder, error) {
	if b < 1 || b > full.N {
		return nil, fmt.Errorf("gcn: batch size %d is outside [1, %d], the number of vertices", b, full.N)
	}
	bb := &BatchBuilder{g: g, cfg: cfg, full: full, seed: seed, b: b, group: g.CD,
		p: sampler.InclusionProbability(full.N, b), same: full.Orders.same(), verts: make([]int32, b)}
	needT := cfg.transposed(full.sameOrders) // full may keep none (NewEvalShards)
	for _, key := range grid.ShardsOf(cfg.Layers, !full.sameOrders) {
		r, p := key.Axes()
		r0, _ := g.Range(full.N, r)
		c0, _ := g.Range(full.N, p)
		s := full.adj[key]
		bb.shards = append(bb.shards, batchShard{key: key, in: key.ColOrder(), out: key.RowOrder(), rowAxis: r, colAxis: p,
			ex: sampler.NewExtractor(s.a, r0, c0), needsTranspose: needT[key]})
	}
	fr0, fr1 := g.Range(full.N, grid.X)
	bb.fr0 = fr0
	if fr1 > fr0 {
		bb.fw = full.featureLen() / (fr1 - fr0)
	}
	return bb, nil
}

// Size returns the batch size B.
func (bb *BatchBuilder) Size() int { return bb.b }

// Build returns the shards of step's mini-batch in new storage: BuildInto
// on a NewBatch.
func (bb *BatchBuilder) Build(step int) (*Shards, error) {
	sh := bb.NewBatch()
	if err := bb.BuildInto(step, sh); err != nil {
		return nil, err
	}
	return sh, nil
}

// NewBatch returns storage for this builder's batches, for BuildInto to
// fill: orders and bounds of B vertices, and for every adjacency shard,
// the feature block and the labels, arrays as large as a batch's share of
// them can be — except the adjacency blocks' entries, which start at
// their expected count with slack and grow when a batch holds more.
func (bb *BatchBuilder) NewBatch() *Shards {
	g, full, b := bb.g, bb.full, bb.b
	o := &Orders{parent: full.Orders}
	for k := 0; k < 2; k++ {
		if k == 1 && bb.same {
			break // BuildInto shares order 0's lists
		}
		o.pos[k], o.Order[k] = make([]int32, b), make([]int32, b)
	}
	bounds := new([2][3][]int)
	for k := 0; k < 2; k++ {
		for _, a := range []grid.Axis{grid.X, grid.Y, grid.Z} {
			bounds[k][a] = make([]int, g.Size(a)+1)
		}
	}
	sh := &Shards{N: b, Features: full.Features, Classes: full.Classes, Orders: o,
		adj: make(map[grid.Shard]*adjShard, len(bb.shards)), bounds: bounds, sameOrders: full.sameOrders}
	block := func(rows, nnz int) *spmm.CSR {
		return &spmm.CSR{RowPtr: make([]int64, 0, rows+1), ColIdx: make([]int32, 0, nnz), Val: make([]float32, 0, nnz)}
	}
	for _, s := range bb.shards {
		src := s.ex.A
		rows, cols := min(b, src.Rows), min(b, src.Cols)
		// A uniform sample of B of the N vertices holds about B/N of the
		// shard's rows and columns.
		nnz := s.ex.Estimate((b*src.Rows+full.N-1)/full.N, (b*src.Cols+full.N-1)/full.N)
		d := &adjShard{a: block(rows, nnz)}
		if s.needsTranspose {
			d.at = block(cols, nnz)
		}
		sh.adj[s.key] = d
	}
	fr0, fr1 := g.Range(full.N, grid.X)
	if full.XB != nil {
		sh.XB = make([]uint16, 0, min(b, fr1-fr0)*bb.fw)
	} else {
		sh.X = make([]float32, 0, min(b, fr1-fr0)*bb.fw)
	}
	rowAxis, _ := logitsAxes(bb.cfg)
	lr0, lr1 := g.Range(full.N, rowAxis)
	n := min(b, lr1-lr0)
	sh.Labels, sh.Train, sh.Val, sh.Test = make([]int32, 0, n), make([]bool, 0, n), make([]bool, 0, n), make([]bool, 0, n)
	return sh
}

// BuildInto writes the shards of step's mini-batch into dst, a batch from
// this builder's NewBatch, overwriting all of it and reusing its storage:
// once its adjacency blocks have held the largest batch of a run, it
// allocates nothing. dst must not be in use (a model trains on the batch
// it was given until its step is done). It panics if dst is not this
// builder's.
func (bb *BatchBuilder) BuildInto(step int, dst *Shards) error {
	g, full, sh := bb.g, bb.full, dst
	if sh == nil || sh == full || sh.Orders == nil || sh.Orders.parent != full.Orders || sh.bounds == nil || len(sh.adj) != len(bb.shards) {
		panic("gcn: BuildInto of a batch that its BatchBuilder's NewBatch did not make")
	}
	verts, p := sampler.UniformInto(bb.verts, &bb.draw, bb.seed, bb.group, step, full.N, bb.b), bb.p
	if bb.Vertices != nil {
		verts, p = bb.Vertices(step), 1
	}
	o := sh.Orders
	for k := 0; k < 2; k++ {
		if k == 1 && bb.same {
			o.pos[1], o.Order[1] = o.pos[0], o.Order[0]
			break
		}
		// Full capacity and a matching Order length: isolated batches
		// (Vertices) differ in size from step to step.
		o.pos[k] = sampler.PositionsInto(o.pos[k][:cap(o.pos[k])], verts, full.Orders.inv[k])
		o.Order[k] = o.Order[k][:len(o.pos[k])]
		for i, p := range o.pos[k] {
			o.Order[k][i] = full.Orders.Order[k][p]
		}
	}
	bounds := sh.bounds
	for k := 0; k < 2; k++ {
		for _, a := range [...]grid.Axis{grid.X, grid.Y, grid.Z} {
			parts := g.Size(a)
			sampler.BoundsInto(bounds[k][a], o.pos[k], parts, func(i int) (int, int) { return grid.Block(full.N, parts, i) })
		}
	}
	for _, s := range bb.shards {
		rows, rowIDs := bb.local(sh, s.out, s.rowAxis)
		cols, colIDs := bb.local(sh, s.in, s.colAxis)
		d := sh.adj[s.key]
		s.ex.ExtractInto(d.a, d.at, rows, cols, rowIDs, colIDs, p)
		if bb.cfg.Layer == GATLayer && d.at != nil {
			d.fillPerm()
		}
	}

	rows, _ := bb.local(sh, 1, grid.X)
	if full.XB != nil {
		sh.XB = copyRows(sh.XB, full.XB, rows, bb.fr0, bb.fw)
	} else {
		sh.X = copyRows(sh.X, full.X, rows, bb.fr0, bb.fw)
	}

	rowAxis, _ := logitsAxes(bb.cfg)
	lr0, _ := g.Range(full.N, rowAxis)
	rows, ids := bb.local(sh, grid.OutputOrder(bb.cfg.Layers-1), rowAxis)
	n := len(rows)
	sh.Labels, sh.Train, sh.Val, sh.Test = sh.Labels[:n], sh.Train[:n], sh.Val[:n], sh.Test[:n]
	for j, p := range rows {
		i := int(p) - lr0
		sh.Labels[j], sh.Train[j], sh.Val[j], sh.Test[j] = full.Labels[i], full.Train[i], full.Val[i], full.Test[i]
		if bb.LossMask != nil {
			sh.Train[j] = bb.LossMask[ids[j]]
		}
	}
	return nil
}

// local returns the members of the batch's order k in this rank's block
// over axis a: their full-graph positions and their vertex ids.
func (bb *BatchBuilder) local(sh *Shards, k int, a grid.Axis) (pos, ids []int32) {
	lo, hi := sh.rows(bb.g, k, a)
	return sh.Orders.pos[k][lo:hi], sh.Orders.Order[k][lo:hi]
}

// copyRows fills dst (reusing its storage) with the rows of src, w
// elements each, at positions rows less r0.
func copyRows[T float32 | uint16](dst, src []T, rows []int32, r0, w int) []T {
	dst = dst[:len(rows)*w]
	for j, p := range rows {
		i := int(p) - r0
		copy(dst[j*w:(j+1)*w], src[i*w:(i+1)*w])
	}
	return dst
}
