package gcn

import (
	"fmt"

	"scalegnn/grid"
	"scalegnn/sampler"
)

// BatchBuilder builds this rank's shards of mini-batch subgraphs from its
// full-graph shards (ScaleGNN Algorithm 2): every rank of a data-parallel
// group draws the same sample S of B vertices from (seed, group, step),
// keeps the sampled rows and columns of each adjacency shard, rescales the
// off-diagonal weights by 1/p, and slices its features, labels and masks.
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
		p: sampler.InclusionProbability(full.N, b), same: full.Orders.same()}
	for _, key := range grid.ShardsOf(cfg.Layers, !full.sameOrders) {
		r, p := key.Axes()
		r0, _ := g.Range(full.N, r)
		c0, _ := g.Range(full.N, p)
		s := full.adj[key]
		bb.shards = append(bb.shards, batchShard{key: key, in: key.ColOrder(), out: key.RowOrder(), rowAxis: r, colAxis: p,
			ex: sampler.NewExtractor(s.a, r0, c0), needsTranspose: s.at != nil})
	}
	fr0, fr1 := g.Range(full.N, grid.X)
	bb.fr0 = fr0
	if fr1 > fr0 {
		bb.fw = len(full.X) / (fr1 - fr0)
	}
	return bb, nil
}

// Size returns the batch size B.
func (bb *BatchBuilder) Size() int { return bb.b }

// Build returns the shards of step's mini-batch.
func (bb *BatchBuilder) Build(step int) (*Shards, error) {
	g, full := bb.g, bb.full
	verts := sampler.Uniform(bb.seed, bb.group, step, full.N, bb.b)
	o := &Orders{parent: full.Orders}
	for k := 0; k < 2; k++ {
		if k == 1 && bb.same {
			o.pos[1], o.Order[1] = o.pos[0], o.Order[0]
			break
		}
		o.pos[k] = sampler.Positions(verts, full.Orders.inv[k])
		o.Order[k] = make([]int32, len(verts))
		for i, p := range o.pos[k] {
			o.Order[k][i] = full.Orders.Order[k][p]
		}
	}
	var bounds [2][3][]int
	for k := 0; k < 2; k++ {
		for _, a := range []grid.Axis{grid.X, grid.Y, grid.Z} {
			parts := g.Size(a)
			bounds[k][a] = sampler.Bounds(o.pos[k], parts, func(i int) (int, int) { return grid.Block(full.N, parts, i) })
		}
	}
	sh := &Shards{N: bb.b, Features: full.Features, Classes: full.Classes, Orders: o,
		adj: map[grid.Shard]*adjShard{}, bounds: &bounds, sameOrders: full.sameOrders}
	// local returns the members of order k in this rank's block over axis
	// a: their full-graph positions and their vertex ids.
	local := func(k int, a grid.Axis) (pos, ids []int32) {
		lo, hi := sh.rows(g, k, a)
		return o.pos[k][lo:hi], o.Order[k][lo:hi]
	}
	for _, s := range bb.shards {
		rows, rowIDs := local(s.out, s.rowAxis)
		cols, colIDs := local(s.in, s.colAxis)
		a, at := s.ex.Extract(rows, cols, rowIDs, colIDs, bb.p, s.needsTranspose)
		sh.adj[s.key] = &adjShard{a: a, at: at}
	}

	rows, _ := local(1, grid.X)
	sh.X = make([]float32, 0, len(rows)*bb.fw)
	for _, p := range rows {
		i := int(p) - bb.fr0
		sh.X = append(sh.X, full.X[i*bb.fw:(i+1)*bb.fw]...)
	}

	rowAxis, _ := logitsAxes(bb.cfg)
	lr0, _ := g.Range(full.N, rowAxis)
	rows, _ = local(grid.OutputOrder(bb.cfg.Layers-1), rowAxis)
	n := len(rows)
	sh.Labels, sh.Train, sh.Val, sh.Test = make([]int32, n), make([]bool, n), make([]bool, n), make([]bool, n)
	for j, p := range rows {
		i := int(p) - lr0
		sh.Labels[j], sh.Train[j], sh.Val[j], sh.Test[j] = full.Labels[i], full.Train[i], full.Val[i], full.Test[i]
	}
	return sh, nil
}
