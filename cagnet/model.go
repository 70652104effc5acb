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

	Params []*Param
	t      int

	// tape of the last forward pass, per layer: (ÂH)_i and Z_i.
	ah, z []device.Mat
}

// Param is a replicated parameter: float64 master weights and moments on
// the host (updated with gcn's one optimizer rule), float32 copy on the
// device, and the last gradient.
type Param struct {
	Name       string
	Rows, Cols int
	W, G, m, v []float64
	dw, dg     device.Mat
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
}

// New builds rank world.Rank()'s share from the whole graph (every rank
// holds it; a sharded loader is future work). It splits world into the
// process row and column communicators (collective).
func New(world collectives.Comm, dev device.Device, o Options, cfg gcn.Config, opt gcn.Optimizer, g *gcn.Graph) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.Permutation == permute.Double {
		return nil, fmt.Errorf("cagnet: permutation = \"double\" does not apply to train.algorithm = \"1.5d\" (one vertex order serves every layer): use \"single\" or \"none\"")
	}
	order := permute.New(g.Adj.Rows, permute.None, 0)
	if o.Permutation == permute.Single {
		order = permute.New(g.Adj.Rows, permute.Single, o.PermSeed)
		g = permuted(g, order, cfg.Features)
	}
	c := o.Replication
	if cfg.InputProjection || cfg.OutputHead || cfg.Norm || cfg.Residual || cfg.Layer != gcn.GCNLayer {
		return nil, fmt.Errorf("cagnet: train.algorithm = \"1.5d\" supports the plain GCN only: set input_projection, output_head, norm, residual false and layer \"gcn\", or use train.algorithm = \"3d\"")
	}
	l, err := NewLayout(world.Size(), c, world.Rank())
	if err != nil {
		return nil, err
	}
	m := &Model{L: l, cfg: cfg, opt: opt, dev: dev, n: g.Adj.Rows}
	if m.row, err = world.Split(l.Row, l.Col); err != nil {
		return nil, err
	}
	if m.col, err = world.Split(l.Col, l.Row); err != nil {
		return nil, err
	}
	m.labels, m.train, m.val, m.test = g.Labels, g.Train, g.Val, g.Test
	m.lo, m.hi = l.Rows(m.n, l.Row)
	for _, t := range g.Train {
		if t {
			m.nTrain++
		}
	}
	at := spmm.Transpose(g.Adj)
	k0, k1 := l.Stages()
	for k := k0; k < k1; k++ {
		c0, c1 := l.Rows(m.n, k)
		m.a = append(m.a, dev.UploadCSR(subBlock(g.Adj, m.lo, m.hi, c0, c1)))
		m.at = append(m.at, dev.UploadCSR(subBlock(at, m.lo, m.hi, c0, c1)))
	}
	m.verts = device.Alloc[int32](dev, m.hi-m.lo)
	device.Upload(dev, m.verts, 0, order.P1[m.lo:m.hi])
	m.x = m.mat(m.hi-m.lo, cfg.Features)
	device.UploadMat(dev, m.x, g.Features[m.lo*cfg.Features:m.hi*cfg.Features])
	for _, p := range gcn.InitialParams(cfg) {
		q := &Param{Name: p.Name, Rows: p.Rows, Cols: p.Cols, W: p.W,
			G: make([]float64, len(p.W)), m: make([]float64, len(p.W)), v: make([]float64, len(p.W)),
			dw: m.mat(p.Rows, p.Cols), dg: m.mat(p.Rows, p.Cols)}
		q.upload(dev)
		m.Params = append(m.Params, q)
	}
	return m, nil
}

func (m *Model) mat(r, c int) device.Mat {
	return device.Matrix(device.Alloc[float32](m.dev, r*c), r, c)
}

func (p *Param) upload(dev device.Device) {
	w := make([]float32, len(p.W))
	for k, v := range p.W {
		w[k] = float32(v)
	}
	device.UploadMat(dev, p.dw, w)
}

// aggregate returns Σ_k blocks[k]·H_k summed over the process row: the
// staged broadcasts of Algorithm 2. h is this rank's block row of H
// (rows_i × w), which it broadcasts when its process row's stage comes.
func (m *Model) aggregate(blocks []*device.CSR, h device.Mat) (device.Mat, error) {
	w := h.Cols()
	out := m.mat(m.hi-m.lo, w)
	m.dev.Fill(out, 0)
	tmp := m.mat(m.hi-m.lo, w)
	k0, _ := m.L.Stages()
	bufs := make([]device.Mat, len(blocks))
	reqs := make([]collectives.Request, len(blocks))
	start := func(s int) error {
		k := k0 + s
		bufs[s] = h
		if k != m.L.Row {
			c0, c1 := m.L.Rows(m.n, k)
			bufs[s] = m.mat(c1-c0, w)
		}
		var err error
		reqs[s], err = device.IBcast(m.dev, m.col, bufs[s].Flat(), k)
		return err
	}
	if len(blocks) > 0 {
		if err := start(0); err != nil {
			return out, err
		}
	}
	for s, a := range blocks {
		// Stage s+1's broadcast is in flight while stage s multiplies.
		if s+1 < len(blocks) {
			if err := start(s + 1); err != nil {
				return out, err
			}
		}
		if err := reqs[s].Wait(); err != nil {
			return out, err
		}
		m.dev.SpMM(tmp, a, bufs[s])
		m.dev.Add(out, out, tmp)
	}
	return out, device.AllReduce(m.dev, m.row, out.Flat(), collectives.Sum)
}

// dropout applies layer l's input dropout mask of optimizer step m.t (the
// reference's masks: keyed by seed, step, site l, vertex id and column) to
// a, in the forward pass to the input and in the backward pass to its
// gradient. Every replica of a process row draws the same mask.
func (m *Model) dropout(a device.Mat, l int) device.Mat {
	if m.cfg.Dropout == 0 {
		return a
	}
	out := m.mat(a.Rows(), a.Cols())
	m.dev.Dropout(out, a, device.Dropout{Seed: m.cfg.Seed, Step: m.t, Site: l, P: m.cfg.Dropout, Verts: m.verts})
	return out
}

// Forward returns this block row's logits and records the tape; training
// applies dropout.
func (m *Model) Forward(training bool) (device.Mat, error) {
	m.ah, m.z = m.ah[:0], m.z[:0]
	h := m.x
	specs := m.cfg.LayerSpecs()
	for l, s := range specs {
		if training {
			h = m.dropout(h, l)
		}
		ah, err := m.aggregate(m.a, h)
		if err != nil {
			return h, err
		}
		z := m.mat(m.hi-m.lo, s.Out)
		m.dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, ah, m.Params[l].dw, 0, z)
		m.ah, m.z = append(m.ah, ah), append(m.z, z)
		h = z
		if s.Hidden {
			h = m.mat(m.hi-m.lo, s.Out)
			m.dev.ReLU(h, z)
		}
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
	lg := make([]float32, rows*c)
	device.DownloadMat(m.dev, lg, logits)
	d := make([]float32, rows*c)
	loss := []float64{0}
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
	dz := m.mat(rows, c)
	device.UploadMat(m.dev, dz, d)
	specs := m.cfg.LayerSpecs()
	for l := len(specs) - 1; l >= 0; l-- {
		s, p := specs[l], m.Params[l]
		if s.Hidden {
			m.dev.ReLUBackward(dz, dz, m.z[l])
		}
		m.dev.Gemm(spmm.Trans, spmm.NoTrans, 1, m.ah[l], dz, 0, p.dg)
		if err := device.AllReduce(m.dev, m.col, p.dg.Flat(), collectives.Sum); err != nil {
			return 0, err
		}
		g := make([]float32, len(p.G))
		device.DownloadMat(m.dev, g, p.dg)
		for k, v := range g {
			p.G[k] = float64(v)
		}
		if !s.NeedInputGrad {
			break
		}
		gw := m.mat(rows, s.In)
		m.dev.Gemm(spmm.NoTrans, spmm.Trans, 1, dz, p.dw, 0, gw)
		if dz, err = m.aggregate(m.at, gw); err != nil {
			return 0, err
		}
		dz = m.dropout(dz, l)
	}
	return loss[0] / float64(m.nTrain), nil
}

// Step applies one optimizer update to every parameter, identically on
// every rank (the gradients are already summed).
func (m *Model) Step() {
	m.t++
	for _, p := range m.Params {
		for k := range p.W {
			p.W[k], p.m[k], p.v[k] = m.opt.Update(m.t, p.W[k], p.G[k], p.m[k], p.v[k], true)
		}
		p.upload(m.dev)
	}
}

// Comms returns the process-row (size c) and process-column (size P/c)
// communicators, whose counters hold every byte the model moves.
func (m *Model) Comms() (row, col collectives.Comm) { return m.row, m.col }
