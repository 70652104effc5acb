package gcn

import (
	"time"

	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/spmm"
)

// Times accumulates where a rank's time went: local kernels, the 3D
// collectives inside the replica (Comm) and the data-parallel gradient
// all-reduce between replicas (DP).
type Times struct {
	SpMM, GEMM, Comm, DP time.Duration
}

// Options are run-time choices that change how the model communicates,
// not what it computes. (How many threads the kernels use is the
// device's.)
type Options struct {
	// BF16 sends the 3D-PMM partial sums (aggregation, transformation and
	// their input gradients) as bfloat16 (ScaleGNN §V-B); norm, loss,
	// weight-gradient and data-parallel reductions stay float32.
	BF16 bool
	// Overlap issues the backward pass's two all-reduces on orthogonal
	// groups nonblocking and computes meanwhile (ScaleGNN §V-D).
	Overlap bool
	// Precision is the products' arithmetic, the device's
	// (device.PrecisionOf): NewModel sets it. In mixed precision the GCN
	// and SAGE layers keep H = Â·F̃ in bfloat16 only, rounded once, and
	// pack each GEMM operand once for the forward and backward products
	// that read it (mixed.go); the arena plan follows.
	Precision device.Precision
	// FeaturesBF16: the shards hold their features in bfloat16
	// (Shards.FeaturesToBF16; mixed precision only). NewModel sets it from
	// its shards; every batch must agree.
	FeaturesBF16 bool
	// SingleOrder: the shards' two vertex orders are one (no double
	// permutation), so that on a grid of one rank a redistribution moves
	// nothing (reuse.go's selfInInput). NewModel sets it from its shards.
	SingleOrder bool
}

// Model is one rank's part of the 3D-parallel model. Its parameters and
// every activation, gradient and temporary live on its Device; a step
// runs the Device's operations and the collectives on device buffers, and
// allocates nothing once its arenas have grown to the step's size.
type Model struct {
	Cfg    Config
	Opt    Optimizer
	Params []*Param

	g     *grid.Grid
	dev   device.Device
	specs []layerSpec
	// layerParams[l] are layer l's weight, norm scale (nil without norm),
	// W_self (nil but for SAGE), and attention vectors and bias (nil but
	// for GAT).
	layerParams [][6]*Param
	t           int // optimizer steps taken

	// cur is the binding in use: &full, or &batch for a mini-batch.
	cur *bound
	// full is the model bound to the full graph's shards, which Evaluate
	// uses whatever batch is being trained on; batch is rebound to each
	// mini-batch Use is given, reusing its storage.
	full, batch bound
	// grads holds every parameter's gradient, in parameter order, so the
	// data-parallel average is one all-reduce.
	grads device.Buffer[float32]
	// actF32 keeps every hidden output in float32 (reuse.go's actBF16
	// off): the path before it, which tests compare with bit for bit.
	actF32 bool
	// GradScale, when neither 0 nor 1, scales this worker's gradient
	// before the data-parallel average: isolated training's coverage
	// correction factor, set before each step.
	GradScale float32
	// decayFolded says scaleGrads put the coupled weight decay into this
	// step's gradient, so Step must not add it again; decayTmp is its
	// scratch (gcn/gradscale.go).
	decayFolded bool
	decayTmp    device.Buffer[float32]
	tp          tape
	// total (loss sum, training rows) and hits (accuracy's hits and split
	// sizes) are all-reduced over rows; allocated apart from the Model,
	// which holds pointers, because cgo collectives refuse memory that does.
	total *[2]float64
	hits  *[6]int64

	// Times is reset by the caller as it likes.
	Times Times
	// Options are those given to NewModel; they may be changed between
	// steps.
	Options Options
	// PMMBytes counts the payload bytes this rank handed to the 3D-PMM
	// all-reduces (those that BF16 halves); reset by the caller as it likes.
	PMMBytes int64
}

// NewModel builds this rank's blocks of the parameters on dev, initialised
// identically to the reference model (and on every replica) from
// cfg.Seed, on the shards sh, running with the options run.
func NewModel(g *grid.Grid, dev device.Device, cfg Config, opt Optimizer, sh *Shards, run Options) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	run.Precision = device.PrecisionOf(dev)
	run.FeaturesBF16 = sh.XB != nil
	run.SingleOrder = sh.sameOrders
	m := &Model{Cfg: cfg, Opt: opt, g: g, dev: dev, specs: cfg.layers(), Options: run,
		total: new([2]float64), hits: new([6]int64)}
	shapes := paramShapes(cfg)
	var blocks [][4]int
	total := 0
	for _, s := range shapes {
		r0, r1, c0, c1 := m.paramBlock(s)
		blocks = append(blocks, [4]int{r0, r1, c0, c1})
		total += (r1 - r0) * (c1 - c0)
	}
	m.grads = device.Alloc[float32](dev, total)
	off := 0
	for k, s := range shapes {
		p := &Param{Name: s.name, Rows: s.rows, Cols: s.cols, decay: !s.isNorm, dev: dev}
		p.R0, p.R1, p.C0, p.C1 = blocks[k][0], blocks[k][1], blocks[k][2], blocks[k][3]
		n := p.Len()
		p.W, p.m, p.v = device.Alloc[float32](dev, n), device.Alloc[float32](dev, n), device.Alloc[float32](dev, n)
		p.G = m.grads.Slice(off, off+n)
		p.gOff = off
		off += n
		init := make([]float32, n)
		w := p.C1 - p.C0
		for i := p.R0; i < p.R1; i++ {
			for j := p.C0; j < p.C1; j++ {
				init[(i-p.R0)*w+j-p.C0] = float32(s.init(cfg.Seed, i, j))
			}
		}
		p.Upload(init)
		m.Params = append(m.Params, p)
	}
	for l := range m.specs {
		var lp [6]*Param
		for _, p := range m.Params {
			switch p.Name {
			case weightName(l):
				lp[0] = p
			case normName(l):
				lp[1] = p
			case selfName(l):
				lp[2] = p
			case attSrcName(l):
				lp[3] = p
			case attDstName(l):
				lp[4] = p
			case biasName(l):
				lp[5] = p
			}
		}
		m.layerParams = append(m.layerParams, lp)
	}
	m.tp.layers = make([]layerTape, len(m.specs))
	m.full.ar, m.batch.ar = newArena(dev), newArena(dev)
	m.bind(&m.full, sh)
	m.cur = &m.full
	return m, nil
}

// Use makes the model train on sh, a mini-batch built by a BatchBuilder
// over the model's own shards (or those shards themselves). Host devices
// read the batch's arrays in place, so sh must stay unchanged until the
// step on it is done. Evaluate always runs on the full graph.
func (m *Model) Use(sh *Shards) {
	if sh == m.full.sh {
		m.cur = &m.full
		return
	}
	m.bind(&m.batch, sh)
	m.cur = &m.batch
}

// Device returns the device the model runs on.
func (m *Model) Device() device.Device { return m.dev }

// paramBlock returns the block of a parameter this rank holds (docs/architecture.md, "Layouts":
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
	case kindWeight, kindSelf:
		p, q, _ := grid.Rotation(s.layer)
		if m.specs[s.layer].heads > 0 {
			// GAT: rows over Q, every column (gat.go).
			r0, r1 = g.Range(s.rows, q)
			return r0, r1, 0, s.cols
		}
		rowAxis, colAxis = q, p
	case kindAttSrc, kindAttDst, kindBias:
		return 0, s.rows, 0, s.cols
	}
	r0, r1 = g.Range(s.rows, rowAxis)
	c0, c1 = g.Range(s.cols, colAxis)
	return
}

func (m *Model) spmm(dst device.Mat, a *device.CSR, b device.Mat) {
	m.waitDevice()
	t0 := time.Now()
	m.dev.SpMM(dst, a, b)
	m.waitDevice()
	m.Times.SpMM += time.Since(t0)
}

func (m *Model) gemm(tA, tB spmm.Op, a, b, dst device.Mat) {
	m.waitDevice()
	t0 := time.Now()
	m.dev.Gemm(tA, tB, 1, a, b, 0, dst)
	m.waitDevice()
	m.Times.GEMM += time.Since(t0)
}

// gemmAdd is gemm accumulating into dst (dst += op(a)·op(b)).
func (m *Model) gemmAdd(tA, tB spmm.Op, a, b, dst device.Mat) {
	m.waitDevice()
	t0 := time.Now()
	m.dev.Gemm(tA, tB, 1, a, b, 1, dst)
	m.waitDevice()
	m.Times.GEMM += time.Since(t0)
}

// waitDevice waits for a device that queues its work (a GPU), so that
// the SpMM and GEMM times are the products' and not their launches'. It
// costs a few microseconds per product: the R-MAT scale-20 epoch on the
// H100 measured 25.3 ms with it and 24.7 ms without, in separate runs
// (not side by side); the host devices run their work in the call.
func (m *Model) waitDevice() {
	if s, ok := m.dev.(interface{ Sync() }); ok {
		s.Sync()
	}
}

// ForwardBackward runs a training forward pass with the dropout masks of
// step, returns the mean training loss and leaves the gradients in Param.G.
// With data-parallel replicas, the gradients are averaged over them and the
// loss is this replica's.
func (m *Model) ForwardBackward(step int) (float64, error) {
	if m.cur.sh.evalOnly {
		panic("gcn: ForwardBackward on shards from NewEvalShards, which keep no transposes; build training shards with NewShards")
	}
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

// Evaluate runs the model without dropout on the full graph and returns
// the accuracy on each split and the validation loss.
func (m *Model) Evaluate() (Accuracy, error) {
	cur := m.cur
	m.cur = &m.full
	defer func() { m.cur = cur }()
	tp, err := m.forward(false, 0)
	if err != nil {
		return Accuracy{}, err
	}
	acc, err := m.accuracy(tp.logits)
	if err != nil {
		return Accuracy{}, err
	}
	if acc.ValLoss, err = m.valLoss(tp.logits); err != nil {
		return Accuracy{}, err
	}
	return acc, nil
}

// Logits runs the model without dropout on the full graph and returns a
// host copy of this rank's block of the logits (rows and classes split as
// the last layer leaves them).
func (m *Model) Logits() ([]float32, error) {
	cur := m.cur
	m.cur = &m.full
	defer func() { m.cur = cur }()
	tp, err := m.forward(false, 0)
	if err != nil {
		return nil, err
	}
	out := make([]float32, tp.logits.Rows()*tp.logits.Cols())
	device.DownloadMat(m.dev, out, tp.logits)
	return out, nil
}

// Grid returns the grid the model runs on.
func (m *Model) Grid() *grid.Grid { return m.g }

// Shards returns the graph blocks the model trains on.
func (m *Model) Shards() *Shards { return m.cur.sh }

// Build extracts this rank's shards of a graph held in memory and builds
// the model on them: NewMemorySource, NewShards and NewModel.
func Build(g *grid.Grid, dev device.Device, cfg Config, opt Optimizer, gr *Graph, o *Orders, run Options) (*Model, error) {
	src, err := NewMemorySource(gr, o)
	if err != nil {
		return nil, err
	}
	sh, err := NewShards(g, cfg, src)
	if err != nil {
		return nil, err
	}
	return NewModel(g, dev, cfg, opt, sh, run)
}
