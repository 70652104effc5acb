package gcn

import (
	"fmt"
	"slices"

	"scalegnn/grid"
	"scalegnn/internal/hugepage"
	"scalegnn/spmm"
)

// Graph is the global input of NewShards: the normalised adjacency Â, the
// features (N×Features, row-major), labels and split masks, all in the
// original vertex order.
type Graph struct {
	Adj              *spmm.CSR
	Features         []float32
	Labels           []int32
	Train, Val, Test []bool
	// Classes is the number of label classes; 0 means the largest label
	// plus one.
	Classes int
}

// Orders are the two vertex orders of double permutation: Order[k][i] is the
// vertex at position i of order k. Order[0] is p1 and Order[1] is p2 (docs/architecture.md,
// "Layouts"); for a single permutation both are the same slice, without
// permutation both are the identity.
type Orders struct {
	Order [2][]int32
	inv   [2][]int32
	// A mini-batch's orders list only its sampled vertices: parent is the
	// full graph's Orders and pos[k] the sorted positions in parent order k
	// of the members (so member i of order k is parent.Order[k][pos[k][i]]).
	parent *Orders
	pos    [2][]int32
}

// NewOrders builds Orders from p1 and p2 (nil means identity).
func NewOrders(n int, p1, p2 []int32) *Orders {
	o := &Orders{}
	for k, p := range [2][]int32{p1, p2} {
		if p == nil {
			p = make([]int32, n)
			for i := range p {
				p[i] = int32(i)
			}
		}
		if len(p) != n {
			panic(fmt.Sprintf("gcn: order of length %d for %d vertices", len(p), n))
		}
		o.Order[k] = p
		o.inv[k] = make([]int32, n)
		for i, v := range p {
			o.inv[k][v] = int32(i)
		}
	}
	return o
}

// same reports whether both orders are the same permutation.
func (o *Orders) same() bool { return slices.Equal(o.Order[0], o.Order[1]) }

// rowMap returns the map from positions of order a to positions of order b
// (nil when the orders agree), in dst's storage when it is large enough
// (a model rebinding mini-batches reuses it).
func (o *Orders) rowMap(dst []int32, a, b int) []int32 {
	if a == b || o.same() {
		return nil
	}
	rm := dst[:0]
	if cap(rm) < len(o.Order[a]) {
		rm = make([]int32, len(o.Order[a]))
	}
	rm = rm[:len(o.Order[a])]
	if o.parent == nil {
		for i, v := range o.Order[a] {
			rm[i] = o.inv[b][v]
		}
		return rm
	}
	for i, v := range o.Order[a] {
		j, _ := slices.BinarySearch(o.pos[b], o.parent.inv[b][v])
		rm[i] = int32(j)
	}
	return rm
}

// adjShard is one rank's block of one adjacency layout: rows are the R-block
// of the layer's output order, columns the P-block of its input order; at
// is its transpose, nil when no layer using the shard needs it.
type adjShard struct {
	a, at *spmm.CSR
	// perm, for a GAT layer's shard, is the position in a of each entry of
	// at (spmm.TransposePositions): the backward pass reads α, stored in
	// a's order, through it. next is its scratch.
	perm []int32
	next []int64
}

// fillPerm computes perm from a and at, reusing its storage.
func (s *adjShard) fillPerm() {
	nnz := s.a.NNZ()
	if cap(s.perm) < nnz {
		s.perm = make([]int32, nnz, nnz+nnz/4)
	}
	if cap(s.next) < s.a.Cols {
		s.next = make([]int64, s.a.Cols)
	}
	s.perm = s.perm[:nnz]
	spmm.TransposePositions(s.perm, s.next[:s.a.Cols], s.a, s.at)
}

// Shards is what one rank holds of the graph for full-graph training.
type Shards struct {
	N, Features, Classes int
	Orders               *Orders
	// adj is keyed by grid.ShardFor: at most three distinct shards, six
	// with double permutation.
	adj map[grid.Shard]*adjShard
	// sameOrders: both vertex orders are the same permutation, so a
	// layout's shard does not depend on the layer's parity.
	sameOrders bool
	// X is the rank's block of the features: rows split over X in order 1,
	// columns split over Z (with an input projection) or Y (without).
	X []float32
	// XB is the feature block in bfloat16 instead of X, after
	// FeaturesToBF16 (features_bf16.go); featHash is then the float32
	// block's fingerprint term.
	XB       []uint16
	featHash int64
	// Labels and masks of the rank's rows of the logits layout (rows of the
	// final order, split over the logits' row axis).
	Labels           []int32
	Train, Val, Test []bool
	// evalOnly: built by NewEvalShards, without the transposes backward
	// needs.
	evalOnly bool
	// bounds, for a mini-batch, are the row block boundaries per vertex
	// order and axis: the sampled rows keep the blocks of the full graph,
	// so they split unevenly. nil means the even split of grid.Block.
	bounds *[2][3][]int
}

// shardKey names the adjacency shard layer l uses (grid.ShardFor).
func (sh *Shards) shardKey(l int) grid.Shard { return grid.ShardFor(l, !sh.sameOrders) }

// rows returns this rank's rows of a matrix whose rows are the vertices in
// order `order`, split over axis a.
func (sh *Shards) rows(g *grid.Grid, order int, a grid.Axis) (lo, hi int) {
	if sh.bounds == nil {
		return g.Range(sh.N, a)
	}
	b := sh.bounds[order][a]
	c := g.Coord(a)
	return b[c], b[c+1]
}

// layout describes a matrix with rows in vertex order `order` split over
// rowAxis and cols columns split over colAxis, for Redistribute.
func (sh *Shards) layout(order int, rowAxis, colAxis grid.Axis, cols int) grid.Layout {
	l := grid.Layout{Rows: sh.N, Cols: cols, RowAxis: rowAxis, ColAxis: colAxis}
	if sh.bounds != nil {
		l.RowBounds = sh.bounds[order][rowAxis]
	}
	return l
}

// NewShards reads this rank's blocks from src: the adjacency shards of
// every layer (Â for GCN layers, D^-1 A for SAGE: readMeanShard), the feature block and the labels and masks of its logits
// rows. Every rank of the grid reads from the same graph; no communication.
func NewShards(g *grid.Grid, cfg Config, src Source) (*Shards, error) {
	return NewShardsWith(g, cfg, src, ShardOptions{})
}

// ShardOptions say how NewShardsWith builds a rank's shards.
type ShardOptions struct {
	// EvalOnly keeps no transposes (NewEvalShards).
	EvalOnly bool
	// FeaturesBF16 reads the features into bfloat16 (XB), a block of rows
	// at a time through a small float32 buffer: FeaturesToBF16's result
	// without the whole float32 block ever held (features_bf16.go).
	FeaturesBF16 bool
}

// NewEvalShards is NewShards for a model that only evaluates (Evaluate,
// Logits, Probabilities) on them: nothing multiplies by Âᵀ, so no
// transpose is kept, two of a three-layer model's five blocks. That is
// also the full graph of mini-batch training, which trains on batches cut
// from it (a BatchBuilder makes each batch's transposes) and only
// evaluates on it. Training on the shards themselves panics.
func NewEvalShards(g *grid.Grid, cfg Config, src Source) (*Shards, error) {
	return NewShardsWith(g, cfg, src, ShardOptions{EvalOnly: true})
}

// NewShardsWith is NewShards with the options opt.
func NewShardsWith(g *grid.Grid, cfg Config, src Source, opt ShardOptions) (*Shards, error) {
	evalOnly := opt.EvalOnly
	n := src.Sizes().N
	o := src.Orders()
	sh := &Shards{N: n, Features: cfg.Features, Classes: cfg.Classes, Orders: o, adj: map[grid.Shard]*adjShard{}, sameOrders: o.same(), evalOnly: evalOnly}
	keys := grid.ShardsOf(cfg.Layers, !sh.sameOrders)
	needT := cfg.transposed(sh.sameOrders)
	if evalOnly {
		needT = nil
	}
	for i, key := range keys {
		r, p := key.Axes()
		r0, r1 := g.Range(n, r)
		c0, c1 := g.Range(n, p)
		// A GCN block on the diagonal (the same rows as columns, in the
		// same order) is its own transpose, Â being symmetric bit for
		// bit: it serves as its transpose, not a second copy.
		mirror := cfg.Layer == GCNLayer && r0 == c0 && r1 == c1 && (sh.sameOrders || key.RowOrder() == key.ColOrder())
		if s := sh.sameBlock(g.Shape, keys[:i], key); s != nil {
			// The block an earlier shard holds (grid.Shape.SameBlock):
			// kept once, with its transpose if either needs it.
			if needT[key] && s.at == nil {
				if s.at = s.a; !mirror {
					s.at = spmm.Transpose(s.a)
				}
			}
			sh.adj[key] = s
			continue
		}
		read := readShard
		if cfg.Layer == SAGELayer {
			read = func(src Source, ro, r0, r1, co, c0, c1 int, withT bool) (*adjShard, error) {
				return readMeanShard(src, o, ro, r0, r1, co, c0, c1, withT)
			}
		}
		s, err := read(src, key.RowOrder(), r0, r1, key.ColOrder(), c0, c1, needT[key] && !mirror)
		if err != nil {
			return nil, err
		}
		if needT[key] && mirror {
			s.at = s.a
		}
		if s.a.Rows != r1-r0 || s.a.Cols != c1-c0 {
			return nil, fmt.Errorf("gcn: adjacency block of %d×%d for rows [%d, %d) and columns [%d, %d)", s.a.Rows, s.a.Cols, r0, r1, c0, c1)
		}
		sh.adj[key] = s
	}
	if cfg.Layer == GATLayer && !evalOnly {
		for _, s := range sh.adj {
			if s.at != nil && s.perm == nil {
				s.fillPerm()
			}
		}
	}

	fr0, fr1 := g.Range(n, grid.X)
	colAxis := featureColAxis(cfg)
	fc0, fc1 := g.Range(cfg.Features, colAxis)
	var err error
	switch si, ok := src.(SourceInto); {
	case opt.FeaturesBF16:
		err = sh.readFeaturesBF16(g, src, colAxis, fr0, fr1, fc0, fc1)
	case ok:
		sh.X = hugepage.Make[float32]((fr1 - fr0) * (fc1 - fc0))
		err = si.FeatureBlockInto(sh.X, 1, fr0, fr1, fc0, fc1)
	default:
		sh.X, err = src.FeatureBlock(1, fr0, fr1, fc0, fc1)
	}
	if err != nil {
		return nil, err
	}
	if n := sh.featureLen(); n != (fr1-fr0)*(fc1-fc0) {
		return nil, fmt.Errorf("gcn: feature block of %d values for %d rows and %d columns", n, fr1-fr0, fc1-fc0)
	}

	rowAxis, _ := logitsAxes(cfg)
	lr0, lr1 := g.Range(n, rowAxis)
	if sh.Labels, sh.Train, sh.Val, sh.Test, err = src.Labels(grid.OutputOrder(cfg.Layers-1), lr0, lr1); err != nil {
		return nil, err
	}
	final := o.Order[grid.OutputOrder(cfg.Layers-1)]
	for i, lab := range sh.Labels {
		if (sh.Train[i] || sh.Val[i] || sh.Test[i]) && (lab < 0 || int(lab) >= cfg.Classes) {
			return nil, fmt.Errorf("gcn: vertex %d is in a split but has label %d, outside [0, %d)", final[lr0+i], lab, cfg.Classes)
		}
	}
	return sh, nil
}

// transposed marks the shards whose transposes training multiplies by:
// only a layer whose input needs a gradient multiplies by Âᵀ, and the first
// layer of a plain GCN does not. The one rule for NewShards and for the
// batches BatchBuilder cuts.
func (cfg Config) transposed(sameOrders bool) map[grid.Shard]bool {
	t := map[grid.Shard]bool{}
	for l, spec := range cfg.layers() {
		key := grid.ShardFor(l, !sameOrders)
		// A GAT layer multiplies by the transpose for dY, which its
		// weight's gradient needs even when its input needs none.
		t[key] = t[key] || spec.needInputGrad || spec.heads > 0
	}
	return t
}

// sameBlock returns the shard of an earlier key that holds key's block on
// a grid of shape s, or nil.
func (sh *Shards) sameBlock(s grid.Shape, earlier []grid.Shard, key grid.Shard) *adjShard {
	for _, k := range earlier {
		if s.SameBlock(k, key) {
			return sh.adj[k]
		}
	}
	return nil
}

// readShard reads the adjacency block with rows [r0, r1) of order ro and
// columns [c0, c1) of order co, and its transpose when withT. A SourceInto
// fills arrays allocated here at their final size; when it stores the
// block only as the transpose of its mirror, the mirror is read as the
// transpose and transposed once (Transpose(Transpose(M)) is M bit for bit,
// so the shard is the same as the other way round).
func readShard(src Source, ro, r0, r1, co, c0, c1 int, withT bool) (*adjShard, error) {
	si, ok := src.(SourceInto)
	if !ok {
		a, err := src.AdjBlock(ro, r0, r1, co, c0, c1)
		if err != nil {
			return nil, err
		}
		s := &adjShard{a: a}
		if withT {
			s.at = spmm.Transpose(a)
		}
		return s, nil
	}
	into := func(ro, r0, r1, co, c0, c1 int) (*spmm.CSR, error) {
		nnz, err := si.AdjBlockNNZ(ro, r0, r1, co, c0, c1)
		if err != nil {
			return nil, err
		}
		// Huge pages: the shards are most of what a rank touches first while it
		// loads (internal/hugepage says why and what it saves).
		a := &spmm.CSR{Rows: r1 - r0, Cols: c1 - c0, RowPtr: hugepage.Make[int64](r1 - r0 + 1), ColIdx: hugepage.Make[int32](int(nnz)), Val: hugepage.Make[float32](int(nnz))}
		return a, si.AdjBlockInto(a, ro, r0, r1, co, c0, c1)
	}
	if withT && si.Mirrored(ro, co) {
		at, err := into(co, c0, c1, ro, r0, r1)
		if err != nil {
			return nil, err
		}
		return &adjShard{a: spmm.Transpose(at), at: at}, nil
	}
	a, err := into(ro, r0, r1, co, c0, c1)
	if err != nil {
		return nil, err
	}
	s := &adjShard{a: a}
	if withT {
		s.at = spmm.Transpose(a)
	}
	return s, nil
}

// Adj returns the rank's adjacency shard s and its transpose (nil when no
// layer needs it), or nils when the model uses no such shard.
func (sh *Shards) Adj(s grid.Shard) (a, at *spmm.CSR) {
	if x := sh.adj[s]; x != nil {
		return x.a, x.at
	}
	return nil, nil
}

// logitsAxes returns the axes that split the rows and the classes of the
// logits: the output layout of the last GCN layer (rows R, classes P), or
// with an output head (rows P_L, classes R_L) of the rotation after it.
func logitsAxes(cfg Config) (rows, cols grid.Axis) {
	if cfg.OutputHead {
		p, _, r := grid.Rotation(cfg.Layers)
		return p, r
	}
	p, _, r := grid.Rotation(cfg.Layers - 1)
	return r, p
}

// Bytes is the size of the rank's shard data: the arrays of its adjacency
// shards and their transposes, the feature block, labels and masks (what
// loading must hold at least; README's "Datasets at scale" compares the
// peak RSS with it).
func (sh *Shards) Bytes() int64 {
	csr := func(a *spmm.CSR) int64 {
		if a == nil {
			return 0
		}
		return int64(len(a.RowPtr))*8 + int64(len(a.ColIdx))*4 + int64(len(a.Val))*4
	}
	var n int64
	counted := map[*adjShard]bool{} // shards of the same block are one
	for _, s := range sh.adj {
		if !counted[s] {
			counted[s] = true
			n += csr(s.a)
			if s.at != s.a {
				n += csr(s.at)
			}
		}
	}
	return n + int64(len(sh.X))*4 + int64(len(sh.XB))*2 + int64(len(sh.Labels))*4 + int64(len(sh.Train)+len(sh.Val)+len(sh.Test))
}
