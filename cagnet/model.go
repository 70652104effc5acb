package cagnet

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// Model is one rank's share of 1.5D training.
type Model struct {
	L   Layout
	cfg gcn.Config
	opt gcn.Optimizer
	dev device.Device

	row, col  collectives.Comm // process row (size c), process column (size q)
	n, lo, hi int              // vertices; this rank's block row [lo, hi)
	nTrain    int

	a, at  []*device.CSR // Â_ik and (Âᵀ)_ik for k in Stages()
	x      device.Mat
	verts  device.Buffer[int32] // original vertex id of each row: dropout masks are keyed by it
	labels []int32
	train  []bool
	val    []bool
	test   []bool
	// xb holds the features instead of x where featB (FeaturesInBF16;
	// features_bf16.go), featHash their fingerprint term.
	xb       device.MatBF16
	featB    bool
	featHash int64

	Params []*Param
	// w and self index Params per layer: W (gcn<l>.weight) and, for SAGE
	// layers, W_self (gcn<l>.self; -1 for GCN layers); asrc and adst a
	// GAT layer's attention vectors (gcn<l>.att_src, att_dst; -1 else),
	// bias its bias (gcn<l>.bias).
	w, self          []int
	asrc, adst, bias []int
	t                int
	bf16             bool
	// prec is the device's precision (device.PrecisionOf); in BF16 the
	// GCN and SAGE layers keep their tape in bfloat16 (mixed.go). Tests
	// set Float32 on a bf16 device to run the staged path beside it.
	prec device.Precision

	// tape of the last forward pass, per layer: the input after dropout,
	// (ÂH)_i, Z_i and the ReLU's output.
	in, ah, z, act []device.Mat
	// In mixed precision (mixed.go) a GCN or SAGE layer's (ÂH)_i is
	// kept in bfloat16 only (ahb; its ah entry is empty), and where
	// KeepsOut allows, its output too (zb, with the ReLU's positions in
	// pos; its z and act entries are empty).
	// keep holds the mask of the next layer's dropout applied to zb, in
	// training with dropout.
	ahb, zb   []device.MatBF16
	zbOK      []bool
	pos, keep []device.Buffer[uint64]
	// inb is, in mixed precision, each SAGE layer's input in bfloat16
	// (after dropout): its aggregation operand, which its self term and
	// that term's weight gradient read too (mixed.go). Indexed by layer.
	inb []device.MatBF16

	// ws holds the buffers reused from step to step (bufs): the tape's,
	// the backward pass's and the aggregation's, so that a step allocates
	// no device memory after the first.
	ws map[wsKey]device.Mat
	// wsB and wsU are ws's bfloat16 and mask-word buffers (mixed.go), and
	// stageB the bfloat16 broadcast buffers, as stage.
	wsB    map[wsKey]device.Buffer[uint16]
	wsU    map[wsKey]device.Buffer[uint64]
	stageB map[[2]int]device.Buffer[uint16]
	// stage holds one broadcast buffer per stage and width; bf16 the
	// packing staging of the bfloat16 collectives.
	stage map[[2]int]device.Mat
	pack  device.Buffer[uint16]
	// specs are the layers; loss the loss's all-reduce buffer (its own
	// array, not a field: cgo, under MPI, refuses a pointer into a struct
	// that holds Go pointers).
	specs []gcn.LayerSpec
	loss  []float64
	// bufs and reqs are aggregate's per-stage operands and requests;
	// bcastHost and bcastReqs a bfloat16 stage's host staging and request
	// (ibcastBF16), one per stage since two are in flight at once.
	bufs      []operand
	reqs      []collectives.Request
	bcastHost [][]uint16
	bcastReqs []bf16Bcast
	// host buffers of the loss (logits, gradient).
	lg, dl []float32
	// ids are the vertex ids of this block row on the host (the rows of
	// predictions), nnz the nonzeros of a (the dataset's fingerprint).
	ids []int32
	nnz int64

	// bounds, when set, are the first rows of the Q block rows and the
	// total (Q+1 entries) of a bound mini-batch, whose blocks are uneven
	// (MiniBatch.bind); nil means the even blocks of n (Layout.Rows).
	// rowsCap is the row count reused buffers are allocated for at least,
	// so that batches of varying rows and the full graph's evaluation
	// share them without reallocating (0: exactly what is asked).
	bounds  []int
	rowsCap int

	// gv is a GAT layer's block of the bound graph (gat.go); edgeCap and
	// rangeCap are the entries and stage rows its reused buffers hold at
	// least (the full graph's), as rowsCap for rows. gatReqs, gatHost and
	// gatBReqs are its stages' requests and bfloat16 staging.
	gv                gatBlock
	edgeCap, rangeCap int
	gatReqs           []collectives.Request
	gatHost           [][]uint16
	gatBReqs          []bf16Bcast
}

// wsKey names a reused buffer: what it holds and the layer.
type wsKey struct {
	name  string
	layer int
}

// Param is a replicated parameter: weights and moments on the host
// (updated with gcn's one optimizer rule in float64, stored rounded to
// float32 as 3D stores them), float32 copy on the device, and the last
// gradient.
type Param struct {
	Name       string
	Rows, Cols int
	W, G, m, v []float64
	dw, dg     device.Mat
	// db is dw rounded to bfloat16, in mixed precision (upload packs
	// it), for the products that read it as a bfloat16 operand.
	db       device.MatBF16
	hasDB    bool
	decay    bool
	g32, w32 []float32 // host staging of the gradient and weights
}

// Options are the 1.5D settings of a job.
type Options struct {
	// Replication is c (grid.replication): the ranks of a process row.
	Replication int
	// Permutation reorders the vertices before they are cut into block
	// rows (None or Single). Double does not apply: a layer's output rows
	// are the next layer's input rows, so A's rows and columns and H's
	// rows must share one order.
	Permutation permute.Scheme
	// PermSeed draws the permutation.
	PermSeed uint64
	// BF16 sends the broadcasts of H (and of the backward pass's
	// gradients) and the process row's all-reduce of the partial sums as
	// bfloat16 (train.comm_dtype = "bf16"); the loss and the weight
	// gradients stay float32/float64, as in 3D.
	BF16 bool
}

// NewFromSource builds rank world.Rank()'s share of 1.5D training from
// src, reading only what the rank keeps (readBlockRow): its block row of
// Â (or D^-1 A), of Âᵀ, of the features, labels and masks. Rows are the
// positions of src's order 0, whose vertex ids key the dropout masks, so
// a Source permuted as [permute] says trains like the unpermuted graph.
// It splits world into the process row and column communicators and
// agrees on a read error over world (collective).
func NewFromSource(world collectives.Comm, dev device.Device, o Options, cfg gcn.Config, opt gcn.Optimizer, src gcn.Source) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.Permutation != permute.None {
		panic(fmt.Sprintf("cagnet: NewFromSource with permutation %v: a Source comes in its own order 0 (New permutes a whole graph)", o.Permutation))
	}
	if cfg.InputProjection || cfg.OutputHead || cfg.Norm || cfg.Residual {
		return nil, fmt.Errorf("cagnet: train.algorithm = \"1.5d\" supports GCN, SAGE and GAT layers without extras: set input_projection, output_head, norm, residual false, or use train.algorithm = \"3d\"")
	}
	l, err := NewLayout(world.Size(), o.Replication, world.Rank())
	if err != nil {
		return nil, err
	}
	m := &Model{L: l, cfg: cfg, opt: opt, dev: dev, n: src.Sizes().N, bf16: o.BF16, prec: device.PrecisionOf(dev),
		ws: map[wsKey]device.Mat{}, stage: map[[2]int]device.Mat{},
		wsB: map[wsKey]device.Buffer[uint16]{}, wsU: map[wsKey]device.Buffer[uint64]{}, stageB: map[[2]int]device.Buffer[uint16]{}}
	if m.row, err = world.Split(l.Row, l.Col); err != nil {
		return nil, err
	}
	if m.col, err = world.Split(l.Col, l.Row); err != nil {
		return nil, err
	}
	m.lo, m.hi = l.Rows(m.n, l.Row)
	if err := m.readBlockRow(world, src); err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, p := range gcn.InitialParams(cfg) {
		q := &Param{Name: p.Name, Rows: p.Rows, Cols: p.Cols, W: p.W,
			G: make([]float64, len(p.W)), m: make([]float64, len(p.W)), v: make([]float64, len(p.W)),
			dw: m.mat(p.Rows, p.Cols), dg: m.mat(p.Rows, p.Cols), decay: p.Decay}
		if m.mixed() {
			q.db, q.hasDB = device.MatrixBF16(device.Alloc[uint16](dev, p.Rows*p.Cols), p.Rows, p.Cols), true
		}
		q.upload(dev)
		m.Params = append(m.Params, q)
		index[p.Name] = i
	}
	m.specs, m.loss = cfg.LayerSpecs(), make([]float64, 1)
	m.inb = make([]device.MatBF16, len(m.specs))
	for l, s := range m.specs {
		w, ok := index[fmt.Sprintf("gcn%d.weight", l)]
		if !ok {
			panic(fmt.Sprintf("cagnet: no parameter gcn%d.weight among gcn.InitialParams", l))
		}
		self := -1
		if s.Self {
			if self, ok = index[fmt.Sprintf("gcn%d.self", l)]; !ok {
				panic(fmt.Sprintf("cagnet: no parameter gcn%d.self among gcn.InitialParams", l))
			}
		}
		asrc, adst, bias := -1, -1, -1
		if s.Heads > 0 {
			var ok2, ok3 bool
			asrc, ok = index[fmt.Sprintf("gcn%d.att_src", l)]
			adst, ok2 = index[fmt.Sprintf("gcn%d.att_dst", l)]
			bias, ok3 = index[fmt.Sprintf("gcn%d.bias", l)]
			if !ok || !ok2 || !ok3 {
				panic(fmt.Sprintf("cagnet: no parameters gcn%d.att_src, att_dst and bias among gcn.InitialParams", l))
			}
		}
		m.w, m.self = append(m.w, w), append(m.self, self)
		m.asrc, m.adst, m.bias = append(m.asrc, asrc), append(m.adst, adst), append(m.bias, bias)
	}
	if o.BF16 {
		maxW := cfg.Features
		for _, s := range cfg.LayerSpecs() {
			maxW = max(maxW, s.In, s.Out, s.ProjWidth)
		}
		// The largest block row: a stage buffer may be one row longer
		// than this rank's. A GAT layer's Y and dY move as the rows of
		// all the rank's stages at once.
		rows := (m.n + l.Q - 1) / l.Q
		if k0, k1 := l.Stages(); m.isGAT() && k1-k0 > 1 {
			rows *= k1 - k0
		}
		m.pack = device.Alloc[uint16](dev, rows*maxW)
	}
	return m, nil
}

// buf returns the reused rows × cols buffer named (name, layer),
// allocating it on first use.
func (m *Model) buf(name string, layer, rows, cols int) device.Mat {
	// At least rowsCap rows: a mini-batch's rows vary (MiniBatch).
	return m.bufCap(name, layer, rows, cols, m.rowsCap)
}

// bufCap is buf allocating at least capRows rows.
func (m *Model) bufCap(name string, layer, rows, cols, capRows int) device.Mat {
	k := wsKey{name, layer}
	b, ok := m.ws[k]
	if !ok || b.Rows() < rows || b.Cols() != cols {
		b = m.mat(max(rows, capRows), cols)
		m.ws[k] = b
	}
	return device.Matrix(b.Flat().Slice(0, rows*cols), rows, cols)
}

func (m *Model) mat(r, c int) device.Mat {
	return device.Matrix(device.Alloc[float32](m.dev, r*c), r, c)
}

func (p *Param) upload(dev device.Device) {
	if len(p.w32) != len(p.W) {
		p.w32 = make([]float32, len(p.W))
	}
	for k, v := range p.W {
		p.w32[k] = float32(v)
	}
	device.UploadMat(dev, p.dw, p.w32)
	if p.hasDB {
		dev.PackMatBF16(p.db, p.dw)
	}
}

// aggregate computes dst = Σ_k blocks[k]·H_k summed over the process
// row: the staged broadcasts of Algorithm 2. h is this rank's block row of
// H (rows_i × w), which it broadcasts when its process row's stage comes:
// float32, or in mixed precision bfloat16 (operand). The first stage's
// product lands in dst, later ones in a scratch buffer added to it; stage
// buffers are reused from call to call.
func (m *Model) aggregate(dst device.Mat, blocks []*device.CSR, h operand) error {
	w := h.cols()
	k0, _ := m.L.Stages()
	if len(m.bufs) < len(blocks) {
		m.bufs, m.reqs = make([]operand, len(blocks)), make([]collectives.Request, len(blocks))
		m.bcastHost, m.bcastReqs = make([][]uint16, len(blocks)), make([]bf16Bcast, len(blocks))
	}
	bufs, reqs := m.bufs[:len(blocks)], m.reqs[:len(blocks)]
	start := func(s int) error {
		k := k0 + s
		bufs[s] = h
		if k != m.L.Row {
			c0, c1 := m.blockRows(k) // uneven in a mini-batch
			bufs[s] = m.stageOperand(s, c1-c0, w, h.isB)
		}
		var err error
		switch {
		case bufs[s].isB:
			reqs[s], err = ibcastHalfwords(m.dev, m.col, bufs[s].b.Flat(), k, &m.bcastHost[s], &m.bcastReqs[s])
		case m.bf16:
			reqs[s], err = ibcastBF16(m.dev, m.col, bufs[s].f.Flat(), m.pack, k, &m.bcastHost[s], &m.bcastReqs[s])
		default:
			reqs[s], err = device.IBcast(m.dev, m.col, bufs[s].f.Flat(), k)
		}
		return err
	}
	if len(blocks) > 0 {
		if err := start(0); err != nil {
			return err
		}
	} else {
		m.dev.Fill(dst, 0)
	}
	for s, a := range blocks {
		// Stage s+1's broadcast is in flight while stage s multiplies.
		if s+1 < len(blocks) {
			if err := start(s + 1); err != nil {
				return err
			}
		}
		if err := reqs[s].Wait(); err != nil {
			return err
		}
		if s == 0 {
			bufs[s].spmm(m.dev, dst, a)
			continue
		}
		tmp := m.buf("stage.tmp", w, dst.Rows(), w)
		bufs[s].spmm(m.dev, tmp, a)
		m.dev.Add(dst, dst, tmp)
	}
	if m.bf16 {
		return device.AllReduceBF16(m.dev, m.row, dst.Flat(), m.pack)
	}
	return device.AllReduce(m.dev, m.row, dst.Flat(), collectives.Sum)
}

// stageBuf is the reused receive buffer of stage s at width w.
func (m *Model) stageBuf(s, rows, w int) device.Mat {
	k := [2]int{s, w}
	b, ok := m.stage[k]
	if !ok || b.Rows() < rows {
		b = m.mat(max(rows, m.rowsCap), w) // as buf: batches' rows vary
		m.stage[k] = b
	}
	return device.Matrix(b.Flat().Slice(0, rows*w), rows, w)
}

// blockRows returns the rows [lo, hi) of block row k of the bound graph:
// the even blocks of n, or a mini-batch's bounds.
func (m *Model) blockRows(k int) (lo, hi int) {
	if m.bounds != nil {
		return m.bounds[k], m.bounds[k+1]
	}
	return m.L.Rows(m.n, k)
}

// dropout applies layer l's input dropout mask of optimizer step m.t (the
// reference's masks: keyed by seed, step, site l, vertex id and column) to
// a, in the forward pass to the input and in the backward pass to its
// gradient, into out (which may be a). Every replica of a process row
// draws the same mask.
func (m *Model) dropout(out, a device.Mat, l int) device.Mat {
	if m.cfg.Dropout == 0 {
		return a
	}
	m.dev.Dropout(out, a, device.Dropout{Seed: m.cfg.Seed, Step: m.t, Site: l, P: m.cfg.Dropout, Verts: m.verts})
	return out
}

// inBuf is where layer l's input after dropout goes (rows × w): a buffer
// of the layer's own where the backward pass reads it (SAGE's self term,
// GAT's weight gradient), else one shared by every layer of that width,
// dead once the layer's aggregation has broadcast it.
func (m *Model) inBuf(l, rows, w int) device.Mat {
	if s := m.specs[l]; s.Self || s.Heads > 0 {
		return m.buf("in", l, rows, w)
	}
	return m.buf("in.shared", w, rows, w)
}

// Forward returns this block row's logits and records the tape; training
// applies dropout. A SAGE layer adds its input's own rows times W_self
// (every rank holds its block row of the input).
func (m *Model) Forward(training bool) (device.Mat, error) {
	return m.forwardTo(training, len(m.specs)-1)
}

// forwardTo is Forward through layer last, whose output it returns (in
// float32: a pass that ends there keeps it so, KeepsOut).
func (m *Model) forwardTo(training bool, last int) (device.Mat, error) {
	specs := m.specs
	m.in, m.ah, m.z, m.act = m.in[:0], m.ah[:0], m.z[:0], m.act[:0]
	m.ahb, m.zb, m.zbOK, m.pos, m.keep = m.ahb[:0], m.zb[:0], m.zbOK[:0], m.pos[:0], m.keep[:0]
	h, rows := m.x, m.hi-m.lo
	for l, s := range specs[:last+1] {
		if m.mixed() && s.Heads == 0 {
			// mixed.go; the input is the previous layer's output, kept
			// in bfloat16 with this layer's dropout already applied, or
			// float32, or the bfloat16 features, which layerMixed drops.
			in := operand{f: h}
			switch {
			case l == 0 && m.featB:
				in = operand{b: m.xb, isB: true, raw: true}
			case l > 0 && m.zbOK[l-1]:
				in = operand{b: m.zb[l-1], isB: true}
			}
			if err := m.layerMixed(l, s, in, training, last); err != nil {
				return h, err
			}
			h = m.act[l]
			continue
		}
		if training {
			h = m.dropout(m.inBuf(l, rows, h.Cols()), h, l)
		}
		if s.Heads > 0 {
			// The tape of a GAT layer: ah holds Y_i, z the heads'
			// aggregation O_i, act the output.
			y, o, out, err := m.gatForward(l, s, h, training)
			if err != nil {
				return h, err
			}
			m.in, m.ah, m.z, m.act = append(m.in, h), append(m.ah, y), append(m.z, o), append(m.act, out)
			m.ahb = append(m.ahb, device.MatBF16{})
			m.appendUnkept()
			h = out
			continue
		}
		ah := m.buf("ah", l, rows, s.In)
		if err := m.aggregate(ah, m.a, operand{f: h}); err != nil {
			return h, err
		}
		z := m.buf("z", l, rows, s.Out)
		m.dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, ah, m.Params[m.w[l]].dw, 0, z)
		if m.self[l] >= 0 {
			m.dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, h, m.Params[m.self[l]].dw, 1, z)
		}
		m.in, m.ah, m.z = append(m.in, h), append(m.ah, ah), append(m.z, z)
		m.ahb = append(m.ahb, device.MatBF16{})
		m.appendUnkept()
		if s.Hidden {
			// In place: the backward pass's ReLUBackward reads the
			// output as well as the input (both > 0 at once).
			m.dev.ReLU(z, z)
		}
		h = z
		m.act = append(m.act, h)
	}
	return h, nil
}

// LossAndGrad runs forward and backward and leaves every gradient in
// Param.G; it returns the mean cross-entropy over the training vertices.
// The loss is computed on the host in float64 from the downloaded logits.
func (m *Model) LossAndGrad() (float64, error) {
	logits, err := m.Forward(true)
	if err != nil {
		return 0, err
	}
	c, rows := m.cfg.Classes, m.hi-m.lo
	if cap(m.lg) < rows*c {
		m.lg, m.dl = make([]float32, max(rows, m.rowsCap)*c), make([]float32, max(rows, m.rowsCap)*c)
	}
	lg, d := m.lg[:rows*c], m.dl[:rows*c] // a mini-batch's rows vary
	device.DownloadMat(m.dev, lg, logits)
	clear(d)
	loss := m.loss
	loss[0] = 0
	for i := 0; i < rows; i++ {
		v := m.lo + i
		if !m.train[v] {
			continue
		}
		row := lg[i*c : (i+1)*c]
		mx := math.Inf(-1)
		for _, x := range row {
			mx = math.Max(mx, float64(x))
		}
		se := 0.0
		for _, x := range row {
			se += math.Exp(float64(x) - mx)
		}
		loss[0] += math.Log(se) + mx - float64(row[m.labels[v]])
		for j, x := range row {
			g := math.Exp(float64(x)-mx) / se
			if j == int(m.labels[v]) {
				g--
			}
			d[i*c+j] = float32(g / float64(m.nTrain))
		}
	}
	// Every replica of a process row holds the same rows: sum over the
	// process column only.
	if m.col.Size() > 1 {
		if err := m.col.AllReduceF64(loss, collectives.Sum); err != nil {
			return 0, err
		}
	}
	dz := m.buf("dz", len(m.z)-1, rows, c)
	device.UploadMat(m.dev, dz, d)
	specs := m.specs
	// pending is, in mixed precision, the next layer's gradient when it
	// came in bfloat16 (backwardMixed).
	var pending operand
	for l := len(specs) - 1; l >= 0; l-- {
		s, p := specs[l], m.Params[m.w[l]]
		if s.Heads > 0 {
			din, err := m.gatBackward(l, s, dz)
			if err != nil {
				return 0, err
			}
			if !s.NeedInputGrad {
				break
			}
			dz = m.dropout(din, din, l) // in place: din is the pass's own
			continue
		}
		if m.mixed() {
			g := operand{f: dz}
			if pending.isB {
				g = pending
			}
			din, err := m.backwardMixed(l, s, g)
			if err != nil {
				return 0, err
			}
			if !s.NeedInputGrad {
				break
			}
			dz, pending = din.f, din
			continue
		}
		if s.Hidden {
			m.dev.ReLUBackward(dz, dz, m.z[l])
		}
		if err := m.weightGrad(p, m.ah[l], dz); err != nil {
			return 0, err
		}
		if m.self[l] >= 0 {
			if err := m.weightGrad(m.Params[m.self[l]], m.in[l], dz); err != nil {
				return 0, err
			}
		}
		if !s.NeedInputGrad {
			break
		}
		// gw is dead once aggregated, and dz once gw and the weight
		// gradients are computed: one gw per width, and the input's
		// gradient (the next iteration's dz) in the other of two
		// buffers per width, so that the backward pass holds no
		// buffer per layer.
		gw := m.buf("gw", s.In, rows, s.In)
		m.dev.Gemm(spmm.NoTrans, spmm.Trans, 1, dz, p.dw, 0, gw)
		din := m.buf(dzNames[l&1], s.In, rows, s.In)
		if err = m.aggregate(din, m.at, operand{f: gw}); err != nil {
			return 0, err
		}
		if m.self[l] >= 0 {
			m.dev.Gemm(spmm.NoTrans, spmm.Trans, 1, dz, m.Params[m.self[l]].dw, 1, din)
		}
		dz = m.dropout(din, din, l) // in place: din is the pass's own
	}
	if m.nTrain == 0 {
		// A mini-batch without training vertices contributes nothing (as
		// gcn's loss: its gradient is zero).
		return 0, nil
	}
	return loss[0] / float64(m.nTrain), nil
}

// dzNames are the two buffers per width the backward pass's input
// gradients alternate between: layer l's goes into dzNames[l&1], which
// layer l+1's (the dz that layer l's pass reads) is not.
var dzNames = [2]string{"dz.even", "dz.odd"}

// weightGrad sets p.G = xᵀ·dz summed over the process column (every
// replica then holds the same gradient).
func (m *Model) weightGrad(p *Param, x, dz device.Mat) error {
	m.dev.Gemm(spmm.Trans, spmm.NoTrans, 1, x, dz, 0, p.dg)
	return m.reduceGrad(p)
}

// reduceGrad sums p.dg over the process column and downloads it into p.G.
func (m *Model) reduceGrad(p *Param) error {
	if err := device.AllReduce(m.dev, m.col, p.dg.Flat(), collectives.Sum); err != nil {
		return err
	}
	p.download(m.dev)
	return nil
}

// download sets p.G from the device gradient p.dg (MiniBatch calls it
// again after the replicas' all-reduce).
func (p *Param) download(dev device.Device) {
	if len(p.g32) != len(p.G) {
		p.g32 = make([]float32, len(p.G))
	}
	device.DownloadMat(dev, p.g32, p.dg)
	for k, v := range p.g32 {
		p.G[k] = float64(v)
	}
}

// Step applies one optimizer update to every parameter, identically on
// every rank (the gradients are already summed).
func (m *Model) Step() {
	m.t++
	for _, p := range m.Params {
		for k := range p.W {
			// Rounded to float32 as the 3D model keeps them
			// (device.OptimStep, bit for bit): a checkpoint's float32
			// arrays hold them exactly, so a resumed run continues
			// exactly (cagnet/keep.go).
			w, mo, v := m.opt.Update(m.t, p.W[k], p.G[k], p.m[k], p.v[k], p.decay)
			p.W[k], p.m[k], p.v[k] = float64(float32(w)), float64(float32(mo)), float64(float32(v))
		}
		p.upload(m.dev)
	}
}

// Comms returns the process-row (size c) and process-column (size P/c)
// communicators, whose counters hold every byte the model moves.
func (m *Model) Comms() (row, col collectives.Comm) { return m.row, m.col }
