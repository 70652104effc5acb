package gcn

import (
	"time"

	"scalegnn/grid"
	"scalegnn/spmm"
)

// Param is one rank's block of a parameter matrix: global rows [R0, R1) and
// columns [C0, C1) of a Rows×Cols matrix, with its gradient and optimizer
// moments. Blocks are replicated over one grid axis; every replica holds the
// same values after each step because gradients are all-reduced first.
type Param struct {
	Name           string
	Rows, Cols     int
	R0, R1, C0, C1 int
	W, G           []float32
	m, v           []float32
	decay          bool
}

func (p *Param) dense() spmm.Dense {
	return spmm.Dense{Rows: p.R1 - p.R0, Cols: p.C1 - p.C0, Stride: p.C1 - p.C0, Data: p.W}
}

// Times accumulates where a rank's time went: local kernels, the 3D
// collectives inside the replica (Comm) and the data-parallel gradient
// all-reduce between replicas (DP).
type Times struct {
	SpMM, GEMM, Comm, DP time.Duration
}

// Options are run-time choices that change how the model communicates and
// how many goroutines it uses, not what it computes.
type Options struct {
	// BF16 sends the 3D-PMM partial sums (aggregation, transformation and
	// their input gradients) as bfloat16 (ScaleGNN §V-B); norm, loss,
	// weight-gradient and data-parallel reductions stay float32.
	BF16 bool
	// Overlap issues the backward pass's two all-reduces on orthogonal
	// groups nonblocking and computes meanwhile (ScaleGNN §V-D).
	Overlap bool
	// Threads is how many goroutines element-wise passes may use (the
	// kernels' own parallelism is the backend's); 0 or 1 means serial.
	Threads int
}

// Model is one rank's part of the 3D-parallel model.
type Model struct {
	Cfg    Config
	Opt    Optimizer
	Params []*Param

	g     *grid.Grid
	be    spmm.Backend
	sh    *Shards
	specs []layerSpec
	t     int // optimizer steps taken

	layers []layerDims // per GCN layer, of the shards in use
	// rowMaps[k] maps positions of vertex order k to order 1-k, for the
	// residual's redistribution (nil when the orders agree).
	rowMaps [2][]int32
	// full is the model bound to the full graph's shards, which Evaluate
	// uses whatever batch is being trained on.
	full bound

	// Times is reset by the caller as it likes.
	Times Times
	// Options are those given to NewModel; they may be changed between
	// steps.
	Options Options
	// PMMBytes counts the payload bytes this rank handed to the 3D-PMM
	// all-reduces (those that BF16 halves); reset by the caller as it likes.
	PMMBytes int64
}

// NewModel builds this rank's blocks of the parameters, initialised
// identically to the reference model (and on every replica) from cfg.Seed,
// on the shards sh, running with the options run.
func NewModel(g *grid.Grid, be spmm.Backend, cfg Config, opt Optimizer, sh *Shards, run Options) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	m := &Model{Cfg: cfg, Opt: opt, g: g, be: be, sh: sh, specs: cfg.layers(), Options: run}
	for _, s := range paramShapes(cfg) {
		p := &Param{Name: s.name, Rows: s.rows, Cols: s.cols, decay: !s.isNorm}
		p.R0, p.R1, p.C0, p.C1 = m.paramBlock(s)
		n := (p.R1 - p.R0) * (p.C1 - p.C0)
		p.W, p.G = make([]float32, n), make([]float32, n)
		p.m, p.v = make([]float32, n), make([]float32, n)
		w := p.C1 - p.C0
		for i := p.R0; i < p.R1; i++ {
			for j := p.C0; j < p.C1; j++ {
				p.W[(i-p.R0)*w+j-p.C0] = float32(s.init(cfg.Seed, i, j))
			}
		}
		m.Params = append(m.Params, p)
	}
	m.full = m.bind(sh)
	m.use(m.full)
	return m, nil
}

// bound is what the model derives from one Shards: the per-layer local
// dimensions and the residual's row maps.
type bound struct {
	sh      *Shards
	layers  []layerDims
	rowMaps [2][]int32
}

func (m *Model) bind(sh *Shards) bound {
	b := bound{sh: sh}
	for l := range m.specs {
		b.layers = append(b.layers, m.dims(sh, l))
	}
	if m.Cfg.Residual {
		b.rowMaps = [2][]int32{sh.Orders.rowMap(0, 1), sh.Orders.rowMap(1, 0)}
	}
	return b
}

func (m *Model) use(b bound) { m.sh, m.layers, m.rowMaps = b.sh, b.layers, b.rowMaps }

// Use makes the model train on sh, a mini-batch built by a BatchBuilder
// over the model's own shards (or those shards themselves). Evaluate always
// runs on the full graph.
func (m *Model) Use(sh *Shards) {
	if sh == m.full.sh {
		m.use(m.full)
		return
	}
	m.use(m.bind(sh))
}

// paramBlock returns the block of a parameter this rank holds (DESIGN.md:
// a GCN weight is rows Q, columns P; a dense layer's weight is rows b,
// columns c; a norm scale follows the columns of Z, split over P).
func (m *Model) paramBlock(s paramShape) (r0, r1, c0, c1 int) {
	g := m.g
	var rowAxis, colAxis grid.Axis
	switch s.kind {
	case kindProj:
		rowAxis, colAxis = grid.Z, grid.Y
	case kindHead:
		_, q, r := grid.Rotation(s.layer)
		rowAxis, colAxis = q, r
	case kindNorm:
		p, _, _ := grid.Rotation(s.layer)
		c0, c1 = g.Range(s.cols, p)
		return 0, 1, c0, c1
	case kindWeight:
		p, q, _ := grid.Rotation(s.layer)
		rowAxis, colAxis = q, p
	}
	r0, r1 = g.Range(s.rows, rowAxis)
	c0, c1 = g.Range(s.cols, colAxis)
	return
}

func (m *Model) spmm(dst spmm.Dense, a *spmm.CSR, b spmm.Dense) {
	t0 := time.Now()
	m.be.SpMM(dst, a, b)
	m.Times.SpMM += time.Since(t0)
}

func (m *Model) gemm(tA, tB spmm.Op, a, b spmm.Dense, dst spmm.Dense) {
	t0 := time.Now()
	m.be.Gemm(tA, tB, 1, a, b, 0, dst)
	m.Times.GEMM += time.Since(t0)
}

// Step applies one optimizer update to every parameter block with the
// gradients left by Backward. Replicas apply identical updates.
func (m *Model) Step() {
	m.t++
	st := m.Opt.step(m.t)
	for _, p := range m.Params {
		for k := range p.W {
			w, mm, vv := st.update(float64(p.W[k]), float64(p.G[k]), float64(p.m[k]), float64(p.v[k]), p.decay)
			p.W[k], p.m[k], p.v[k] = float32(w), float32(mm), float32(vv)
		}
	}
}

// ForwardBackward runs a training forward pass with the dropout masks of
// step, returns the mean training loss and leaves the gradients in Param.G.
// With data-parallel replicas, the gradients are averaged over them and the
// loss is this replica's.
func (m *Model) ForwardBackward(step int) (float64, error) {
	tp, err := m.forward(true, step)
	if err != nil {
		return 0, err
	}
	loss, d, err := m.loss(tp.logits)
	if err != nil {
		return 0, err
	}
	if err := m.backward(tp, d); err != nil {
		return 0, err
	}
	return loss, m.syncDP()
}

// TrainStep is ForwardBackward followed by Step.
func (m *Model) TrainStep(step int) (float64, error) {
	loss, err := m.ForwardBackward(step)
	if err != nil {
		return 0, err
	}
	m.Step()
	return loss, nil
}

// Evaluate runs the model without dropout and returns the accuracy on each
// split.
func (m *Model) Evaluate() (Accuracy, error) {
	if m.sh != m.full.sh {
		cur := bound{m.sh, m.layers, m.rowMaps}
		m.use(m.full)
		defer m.use(cur)
	}
	tp, err := m.forward(false, 0)
	if err != nil {
		return Accuracy{}, err
	}
	return m.accuracy(tp.logits)
}

// Logits runs the model without dropout and returns this rank's block of
// the logits (rows and classes split as the last layer leaves them).
func (m *Model) Logits() ([]float32, error) {
	if m.sh != m.full.sh {
		cur := bound{m.sh, m.layers, m.rowMaps}
		m.use(m.full)
		defer m.use(cur)
	}
	tp, err := m.forward(false, 0)
	if err != nil {
		return nil, err
	}
	return tp.logits, nil
}

// Grid returns the grid the model runs on.
func (m *Model) Grid() *grid.Grid { return m.g }

// Shards returns the graph blocks the model trains on.
func (m *Model) Shards() *Shards { return m.sh }

// Build extracts this rank's shards of a graph held in memory and builds
// the model on them: NewMemorySource, NewShards and NewModel.
func Build(g *grid.Grid, be spmm.Backend, cfg Config, opt Optimizer, gr *Graph, o *Orders, run Options) (*Model, error) {
	src, err := NewMemorySource(gr, o)
	if err != nil {
		return nil, err
	}
	sh, err := NewShards(g, cfg, src)
	if err != nil {
		return nil, err
	}
	return NewModel(g, be, cfg, opt, sh, run)
}
