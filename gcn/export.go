package gcn

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/internal/counter"
)

// This file is what checkpoints and predictions read and set of a model:
// the optimizer state, which replica of a block writes it, the dataset's
// fingerprint and the outputs of a forward pass as blocks of rows.

// DownloadMoments copies the block's optimizer moments into m and v (each
// of length Len()).
func (p *Param) DownloadMoments(m, v []float32) {
	device.Download(p.dev, m, p.m, 0)
	device.Download(p.dev, v, p.v, 0)
}

// UploadMoments sets the block's optimizer moments from m and v.
func (p *Param) UploadMoments(m, v []float32) {
	device.Upload(p.dev, p.m, 0, m)
	device.Upload(p.dev, p.v, 0, v)
}

// OptimizerSteps returns the optimizer steps taken, the t of Adam's bias
// correction.
func (m *Model) OptimizerSteps() int { return m.t }

// SetOptimizerSteps sets the optimizer step count (a resumed run continues
// the bias correction where its checkpoint left it).
func (m *Model) SetOptimizerSteps(t int) {
	if t < 0 {
		panic(fmt.Sprintf("gcn: SetOptimizerSteps(%d)", t))
	}
	m.t = t
}

// ownsBlock reports whether this rank is the one replica that writes a
// block split over the given axes: a block is replicated over the other
// grid axes and the data-parallel replicas, and the copy at coordinate 0
// on all of them is the writer.
func ownsBlock(g *grid.Grid, split ...grid.Axis) bool {
	if g.CD != 0 {
		return false
	}
	for _, a := range []grid.Axis{grid.X, grid.Y, grid.Z} {
		used := false
		for _, s := range split {
			used = used || s == a
		}
		if !used && g.Coord(a) != 0 {
			return false
		}
	}
	return true
}

// Owns reports whether this rank writes parameter k's block (m.Params[k]):
// exactly one rank of the world does for each distinct block.
func (m *Model) Owns(k int) bool {
	s := paramShapes(m.Cfg)[k]
	switch s.kind {
	case kindProj:
		return ownsBlock(m.g, grid.Z, grid.Y)
	case kindHead:
		_, q, r := grid.Rotation(s.layer)
		return ownsBlock(m.g, q, r)
	case kindNorm:
		p, _, _ := grid.Rotation(s.layer)
		return ownsBlock(m.g, p)
	case kindAttSrc, kindAttDst, kindBias:
		return ownsBlock(m.g)
	default:
		if s.kind == kindWeight && m.specs[s.layer].heads > 0 {
			_, q, _ := grid.Rotation(s.layer)
			return ownsBlock(m.g, q)
		}
		p, q, _ := grid.Rotation(s.layer)
		return ownsBlock(m.g, q, p)
	}
}

// Fingerprint identifies a dataset independently of the grid: a sum over
// the entries of a hash of (vertex, column, value), so that every grid
// adds the same terms.
type Fingerprint struct {
	N, NNZ   int64
	Features uint64 // features by original vertex and column
	Labels   uint64 // labels and split membership by original vertex
}

// entryHash is a 32-bit hash of one entry, so that sums over billions of
// entries stay exact in an int64.
func entryHash(v int32, col int, bits uint64) int64 {
	return int64(counter.Hash4(0x66696e6765727072, uint64(uint32(v)), uint64(uint32(col)), bits) >> 32)
}

// HashFeatures is Fingerprint's term for a block of features: x holds
// rows of w columns starting at column c0, row i that of vertex verts[i]
// (original id). Zero entries add nothing, so the term does not depend on
// how the features are cut into blocks. Every model that writes
// checkpoints (3D here, 1.5D in package cagnet) sums these terms.
func HashFeatures(verts []int32, c0, w int, x []float32) int64 {
	var s int64
	for k, v := range x {
		if v != 0 {
			s += entryHash(verts[k/w], c0+k%w, uint64(math.Float32bits(v)))
		}
	}
	return s
}

// HashLabels is Fingerprint's term for the labels and split masks of the
// vertices verts (original ids), row i vertex verts[i].
func HashLabels(verts, labels []int32, train, val, test []bool) int64 {
	var s int64
	for i, lab := range labels {
		bits := uint64(uint32(lab))
		for b, in := range []bool{train[i], val[i], test[i]} {
			if in {
				bits |= 1 << (32 + b)
			}
		}
		s += entryHash(verts[i], -1, bits)
	}
	return s
}

// Fingerprint computes the dataset's fingerprint from the full graph's
// shards this rank holds, each block counted by its one writer, summed
// over the world in one all-reduce: nothing is gathered.
func (m *Model) Fingerprint() (Fingerprint, error) {
	g, cfg, sh := m.g, m.Cfg, m.full.sh
	var s [3]int64 // nnz, features, labels
	// Layer 0's adjacency block: rows split over R, columns over P.
	p, _, r := grid.Rotation(0)
	if ownsBlock(g, r, p) {
		s[0] = int64(sh.adj[sh.shardKey(0)].a.NNZ())
	}
	s[1], _ = sh.featureHash(g, cfg)
	rowAxis, _ := logitsAxes(cfg)
	if ownsBlock(g, rowAxis) {
		r0, _ := g.Range(sh.N, rowAxis)
		final := sh.Orders.Order[grid.OutputOrder(cfg.Layers-1)]
		s[2] = HashLabels(final[r0:], sh.Labels, sh.Train, sh.Val, sh.Test)
	}
	if err := g.World.AllReduceI64(s[:], collectives.Sum); err != nil {
		return Fingerprint{}, err
	}
	return Fingerprint{N: int64(sh.N), NNZ: s[0], Features: uint64(s[1]), Labels: uint64(s[2])}, nil
}

// Block is this rank's block of a vertex-by-column output of the model:
// row i is vertex Vertices[i] (in the dataset's original order), columns
// [C0, C1) of Cols. Owner says whether this rank is the one replica that
// writes it.
type Block struct {
	Vertices []int32
	Cols     int
	C0, C1   int
	Data     []float32 // len(Vertices) × (C1-C0), row-major
	Owner    bool
}

// LastHidden is the last layer Embeddings returns: Layers-1 with an
// output head (the last GCN layer has its ReLU), else Layers-2 (-1: none).
func LastHidden(c Config) int {
	if c.OutputHead {
		return c.Layers - 1
	}
	return c.Layers - 2
}

// Probabilities runs the model without dropout on the full graph and
// returns this rank's block of the class probabilities (the softmax of the
// logits; the row max and the sum of exponentials are all-reduced over the
// class axis).
func (m *Model) Probabilities() (Block, error) {
	logits, err := m.Logits()
	if err != nil {
		return Block{}, err
	}
	cfg, g, sh := m.Cfg, m.g, m.full.sh
	rowAxis, colAxis := logitsAxes(cfg)
	r0, r1 := sh.rows(g, grid.OutputOrder(cfg.Layers-1), rowAxis)
	c0, c1 := g.Range(cfg.Classes, colAxis)
	rows, w := r1-r0, c1-c0
	mx := make([]float32, rows)
	for i := range mx {
		mx[i] = float32(math.Inf(-1))
		for _, x := range logits[i*w : (i+1)*w] {
			mx[i] = max(mx[i], x)
		}
	}
	cc := g.Comm(colAxis)
	if err := cc.AllReduceF32(mx, collectives.Max); err != nil {
		return Block{}, err
	}
	sum := make([]float64, rows)
	for i := range sum {
		for _, x := range logits[i*w : (i+1)*w] {
			sum[i] += math.Exp(float64(x - mx[i]))
		}
	}
	if err := cc.AllReduceF64(sum, collectives.Sum); err != nil {
		return Block{}, err
	}
	for i := range rows {
		for j := i * w; j < (i+1)*w; j++ {
			logits[j] = float32(math.Exp(float64(logits[j]-mx[i])) / sum[i])
		}
	}
	return Block{Vertices: sh.Orders.Order[grid.OutputOrder(cfg.Layers-1)][r0:r1], Cols: cfg.Classes, C0: c0, C1: c1,
		Data: logits, Owner: ownsBlock(g, rowAxis, colAxis)}, nil
}

// Embeddings runs the model without dropout on the full graph and returns
// this rank's block of hidden layer l's output (0 ≤ l < Layers-1, and
// l = Layers-1 too when an output head follows the GCN layers): the
// ReLU's output (after RMSNorm when the model has it, before a residual
// add), N × the layer's width.
func (m *Model) Embeddings(l int) (Block, error) {
	if l < 0 || l >= len(m.specs) || !m.specs[l].hidden {
		return Block{}, fmt.Errorf("gcn: embeddings of layer %d: the model's hidden layers are 0 to %d", l, LastHidden(m.Cfg))
	}
	cur := m.cur
	m.cur = &m.full
	defer func() { m.cur = cur }()
	// Up to layer l: a later layer may write its output into l's (reuse.go).
	if _, err := m.forwardTo(false, 0, l); err != nil {
		return Block{}, err
	}
	d := m.full.layers[l]
	act := m.tp.layers[l].act
	out := make([]float32, act.Rows()*act.Cols())
	device.DownloadMat(m.dev, out, act)
	sh := m.full.sh
	return Block{Vertices: sh.Orders.Order[grid.OutputOrder(l)][d.rr0:d.rr1], Cols: d.spec.out, C0: d.out0, C1: d.out1,
		Data: out, Owner: ownsBlock(m.g, d.r, d.p)}, nil
}

// SoftmaxRows replaces each row of the row-major rows × c matrix data with
// its softmax, as Probabilities computes it (the row max subtracted, the
// sum in float64): what the models whose every rank holds whole rows (1.5D,
// neighbor mode) write as probabilities.
func SoftmaxRows(data []float32, c int) {
	for i := 0; i+c <= len(data); i += c {
		row := data[i : i+c]
		mx := float32(math.Inf(-1))
		for _, x := range row {
			mx = max(mx, x)
		}
		sum := 0.0
		for _, x := range row {
			sum += math.Exp(float64(x - mx))
		}
		for j, x := range row {
			row[j] = float32(math.Exp(float64(x-mx)) / sum)
		}
	}
}
