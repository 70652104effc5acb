package neighbor

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/spmm"
)

// Param is one parameter matrix, whole on every rank (data parallelism):
// weights, gradient and Adam moments in device memory.
type Param struct {
	Name       string
	Rows, Cols int
	W, G       device.Buffer[float32]
	m, v       device.Buffer[float32]
	decay      bool
}

// Model is the GNN on message-flow graphs: Layers graph layers (GCN,
// SAGE-mean or GAT), ReLU (ELU for GAT) and dropout between them,
// softmax cross-entropy on the seeds, and the optimizer, every operation
// on the Device.
type Model struct {
	Cfg    gcn.Config
	Opt    gcn.Optimizer
	Params []*Param

	dev   device.Device
	grads device.Buffer[float32] // every Param's G, contiguous: one all-reduce
	t     int                    // optimizer steps taken

	wIdx, sIdx []int // per layer: the index of W_neigh and of W_self (-1 for GCN)
	// aIdx[l] is a GAT layer's att_src (att_dst and the bias follow it), heads[l]
	// its heads; -1 and 0 for other layers.
	aIdx, heads []int
	widths      []int // widths[l] is layer l's input width; widths[L] the classes

	ls             []layerBufs
	labels         device.Buffer[int32]
	ones           device.Buffer[uint8]
	mx, sums, dlog device.Buffer[float32]
	onesN          int          // the batch size ones was filled for
	views          []device.Mat // a step's per-layer views, reused
}

// layerBufs is one layer's step storage, grown to the largest step seen.
type layerBufs struct {
	verts     device.Buffer[int32]
	fwd, bwd  device.CSR
	in        device.Buffer[float32] // the layer's input, dropped out in place
	keep      device.Buffer[uint64]
	agg, z    device.Buffer[float32]
	dagg, din device.Buffer[float32]
	gat       gatBufs
}

// CheckConfig reports what the neighbor mode does not support: it runs
// the plain stack of graph layers (Kipf's GCN, GraphSAGE-mean or GAT).
func CheckConfig(cfg gcn.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.InputProjection || cfg.OutputHead || cfg.Norm || cfg.Residual {
		return fmt.Errorf("neighbor: the neighbor mode trains a plain stack of graph layers: set model.input_projection, output_head and residual to false and model.norm = \"none\"")
	}
	return nil
}

// NewModel returns the model on dev with gcn's initial parameters for cfg
// (gcn.InitialParams), so a run starts from the weights a gcn run would.
func NewModel(dev device.Device, cfg gcn.Config, opt gcn.Optimizer) (*Model, error) {
	if err := CheckConfig(cfg); err != nil {
		return nil, err
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	m := &Model{Cfg: cfg, Opt: opt, dev: dev, ls: make([]layerBufs, cfg.Layers)}
	init := gcn.InitialParams(cfg)
	n := 0
	for _, p := range init {
		n += p.Rows * p.Cols
	}
	m.grads = device.Alloc[float32](dev, n)
	off := 0
	m.wIdx, m.sIdx = make([]int, cfg.Layers), make([]int, cfg.Layers)
	m.aIdx, m.heads = make([]int, cfg.Layers), make([]int, cfg.Layers)
	for _, ip := range init {
		sz := ip.Rows * ip.Cols
		p := &Param{Name: ip.Name, Rows: ip.Rows, Cols: ip.Cols, decay: ip.Decay,
			W: device.Alloc[float32](dev, sz), G: m.grads.Slice(off, off+sz),
			m: device.Alloc[float32](dev, sz), v: device.Alloc[float32](dev, sz)}
		off += sz
		w := make([]float32, sz)
		for i, x := range ip.W {
			w[i] = float32(x)
		}
		device.Upload(dev, p.W, 0, w)
		m.Params = append(m.Params, p)
	}
	// gcn's order: per layer its weight, then a SAGE layer's W_self or a
	// GAT layer's att_src, att_dst and bias.
	k := 0
	specs := cfg.LayerSpecs()
	for l := range cfg.Layers {
		m.wIdx[l], m.sIdx[l], m.aIdx[l] = k, -1, -1
		k++
		switch cfg.Layer {
		case gcn.SAGELayer:
			m.sIdx[l] = k
			k++
		case gcn.GATLayer:
			m.aIdx[l], m.heads[l] = k, specs[l].Heads
			k += 3
		}
	}
	if k != len(m.Params) {
		panic(fmt.Sprintf("neighbor: %d parameters for %d layers", len(m.Params), cfg.Layers))
	}
	for l := range cfg.Layers {
		m.widths = append(m.widths, m.Params[m.wIdx[l]].Rows)
	}
	m.widths = append(m.widths, cfg.Classes)
	return m, nil
}

// Device returns the model's device.
func (m *Model) Device() device.Device { return m.dev }

// NumParams returns the number of scalar parameters (the length of the
// gradient all-reduce).
func (m *Model) NumParams() int { return m.grads.Len() }

// OptimizerSteps returns the optimizer steps taken.
func (m *Model) OptimizerSteps() int { return m.t }

func mat(p *Param, b device.Buffer[float32]) device.Mat { return device.Matrix(b, p.Rows, p.Cols) }

// grow returns the first n elements of *b, reallocating it (with a
// quarter to spare) when it is shorter.
func grow[T device.Elem](dev device.Device, b *device.Buffer[T], n int) device.Buffer[T] {
	if b.Len() < n {
		*b = device.Alloc[T](dev, n+n/4)
	}
	return b.Slice(0, n)
}

func (m *Model) mat(b *device.Buffer[float32], rows, cols int) device.Mat {
	return device.Matrix(grow(m.dev, b, rows*cols), rows, cols)
}

// ForwardBackward runs one training step's forward and backward pass on
// batch b with input features x (the frontier's rows, host memory), and
// leaves in every Param's G the gradient of the mean loss over this
// rank's seeds; it returns that mean loss.
func (m *Model) ForwardBackward(b *Batch, x []float32) (float64, error) {
	dev, cfg := m.dev, m.Cfg
	L := cfg.Layers
	training := cfg.Dropout > 0
	if len(m.views) != 4*L+1 {
		m.views = make([]device.Mat, 4*L+1) // the views, not the memory
	}
	ins, zs, aggs, drops := m.views[:L+1], m.views[L+1:2*L+1], m.views[2*L+1:3*L+1], m.views[3*L+1:]
	for l := range L {
		mf := &b.MFGs.Layers[l]
		lb := &m.ls[l]
		nDst, nSrc := mf.A.Rows, len(mf.Src)
		dev.UploadCSRInto(&lb.fwd, b.Fwd[l])
		dev.UploadCSRInto(&lb.bwd, &b.Bwd[l])
		verts := grow(dev, &lb.verts, nSrc)
		device.Upload(dev, verts, 0, mf.Src)
		gat := m.heads[l] > 0
		if gat {
			perm := grow(dev, &lb.gat.perm, len(b.Perm[l]))
			device.Upload(dev, perm, 0, b.Perm[l])
		}
		win, wout := m.widths[l], m.widths[l+1]
		if l == 0 {
			ins[0] = m.mat(&lb.in, nSrc, win)
			device.UploadMat(dev, ins[0], x)
		}
		h := ins[l]
		if h.Rows() != nSrc {
			panic(fmt.Sprintf("neighbor: layer %d has %d sources, its input %d rows", l, nSrc, h.Rows()))
		}
		if training {
			keep := grow(dev, &lb.keep, nSrc*((win+63)/64))
			dst := h
			if gat && l > 0 {
				// h is the previous layer's ELU output, which its
				// backward pass reads: drop out into a copy.
				dst = m.mat(&lb.in, nSrc, win)
			}
			dev.DropoutRecord(dst, h, keep, device.Dropout{Seed: cfg.Seed, Step: b.Step, Site: l, P: cfg.Dropout, Verts: verts})
			h = dst
		}
		drops[l] = h
		if gat {
			zs[l] = m.gatForward(l, b.Step, training, h, verts)
			if l < L-1 {
				ins[l+1] = zs[l]
			}
			continue
		}
		aggs[l] = m.mat(&lb.agg, nDst, win)
		dev.SpMM(aggs[l], &lb.fwd, h)
		zs[l] = m.mat(&lb.z, nDst, wout)
		dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, aggs[l], mat(m.Params[m.wIdx[l]], m.Params[m.wIdx[l]].W), 0, zs[l])
		if s := m.sIdx[l]; s >= 0 {
			dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, h.Slice(0, nDst, 0, win), mat(m.Params[s], m.Params[s].W), 1, zs[l])
		}
		if l < L-1 {
			ins[l+1] = m.mat(&m.ls[l+1].in, nDst, wout)
			dev.ReLU(ins[l+1], zs[l])
		}
	}
	// Softmax cross-entropy over the seeds, all of them training vertices.
	logits := zs[L-1]
	B := logits.Rows()
	labels := grow(dev, &m.labels, B)
	device.Upload(dev, labels, 0, b.Labels)
	ones := grow(dev, &m.ones, B)
	if m.onesN != B || m.ones.Len() < B {
		ones = grow(dev, &m.ones, B)
		o := make([]uint8, B) // once per batch size
		for i := range o {
			o[i] = 1
		}
		device.Upload(dev, ones, 0, o)
		m.onesN = B
	}
	mx, sums := grow(dev, &m.mx, B), grow(dev, &m.sums, 2*B)
	dev.RowMax(mx, logits, ones)
	dev.SoftmaxSums(sums, logits, mx, labels, ones, 0)
	d := m.mat(&m.dlog, B, cfg.Classes)
	loss, count := dev.SoftmaxGrad(d, logits, mx, sums, labels, ones, 0)
	if count == 0 {
		return 0, fmt.Errorf("neighbor: step %d has no seeds", b.Step)
	}
	dev.Scale(d, float32(1/count), d)

	// Backward, last layer first; dz is ∂loss/∂z of the layer.
	dz := d
	for l := L - 1; l >= 0; l-- {
		lb := &m.ls[l]
		nDst, nSrc := zs[l].Rows(), drops[l].Rows()
		win := m.widths[l]
		if m.heads[l] > 0 {
			din, ok := m.gatBackward(l, b.Step, training, dz, drops[l])
			if !ok {
				break
			}
			dz = din
			continue
		}
		if l < L-1 {
			dev.ReLUBackward(dz, dz, zs[l])
		}
		pw := m.Params[m.wIdx[l]]
		dev.Gemm(spmm.Trans, spmm.NoTrans, 1, aggs[l], dz, 0, mat(pw, pw.G))
		if s := m.sIdx[l]; s >= 0 {
			ps := m.Params[s]
			dev.Gemm(spmm.Trans, spmm.NoTrans, 1, drops[l].Slice(0, nDst, 0, win), dz, 0, mat(ps, ps.G))
		}
		if l == 0 {
			break
		}
		dagg := m.mat(&lb.dagg, nDst, win)
		dev.Gemm(spmm.NoTrans, spmm.Trans, 1, dz, mat(pw, pw.W), 0, dagg)
		din := m.mat(&lb.din, nSrc, win)
		dev.SpMM(din, &lb.bwd, dagg)
		if s := m.sIdx[l]; s >= 0 {
			ps := m.Params[s]
			dev.Gemm(spmm.NoTrans, spmm.Trans, 1, dz, mat(ps, ps.W), 1, din.Slice(0, nDst, 0, win))
		}
		if training {
			dev.ApplyMask(din, din, lb.keep.Slice(0, nSrc*((win+63)/64)), cfg.Dropout)
		}
		dz = din
	}
	return loss / count, nil
}

// AllReduceGrads averages the gradients over comm's ranks (every rank
// has the same number of seeds, so the mean of the ranks' mean-loss
// gradients is the gradient of the global batch's mean loss).
func (m *Model) AllReduceGrads(comm collectives.Comm) error {
	if comm.Size() == 1 {
		return nil
	}
	if err := device.AllReduce(m.dev, comm, m.grads, collectives.Sum); err != nil {
		return err
	}
	g := device.Matrix(m.grads, 1, m.grads.Len())
	m.dev.Scale(g, float32(1/float64(comm.Size())), g)
	return nil
}

// Step applies one optimizer update with the gradients in G, in float64
// per element exactly as gcn's optimizer does.
func (m *Model) Step() {
	m.t++
	o := m.Opt
	st := device.OptimStep{LR: o.LR, Beta1: o.Beta1, Beta2: o.Beta2, Epsilon: o.Epsilon,
		Corr1: 1 - math.Pow(o.Beta1, float64(m.t)), Corr2: 1 - math.Pow(o.Beta2, float64(m.t))}
	switch o.Name {
	case "sgd":
		st.Kind = device.SGD
	case "adam":
		st.Kind = device.Adam
	case "adamw":
		st.Kind = device.AdamW
	}
	for _, p := range m.Params {
		s := st
		if !p.decay {
			s.WeightDecay = 0
		} else {
			s.WeightDecay = o.WeightDecay
		}
		m.dev.OptimStep(p.W, p.G, p.m, p.v, s)
	}
}
