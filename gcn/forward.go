package gcn

import (
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/spmm"
)

// tape keeps the local blocks the backward pass needs. The model owns one
// and overwrites it every pass; its matrices live in the pass's arena.
type tape struct {
	step     int
	training bool
	projIn   device.Mat
	// projInB: the input projection read the features in bfloat16
	// (projInBF16), which its weight gradient reads too.
	projInB    device.MatBF16
	projInBF16 bool
	layers     []layerTape
	headIn     device.Mat // after dropout
	headKeep   mask       // its dropout mask
	logits     device.Mat
	// scratch is the pass's float32 scratch through which a product is
	// rounded a block of rows at a time (mixed.go), shared by the layers
	// of both passes and taken again only where one needs more; df the
	// backward pass's float32 dF̃ of SAGE layers whose input is bfloat16
	// (dfSelfBF16), shared likewise.
	scratch, df device.Buffer[float32]
}

type layerTape struct {
	inDrop device.Mat // F̃: input after dropout (rows P, cols Q)
	// inB: layer 0 aggregates the bfloat16 features themselves (inBOK;
	// features_bf16.go), and inDrop is unset.
	inB   device.MatBF16
	inBOK bool
	keep  mask       // its dropout mask, when backward needs it
	h     device.Mat // H = Â·F̃ (rows R, cols Q), in float32 precision
	self  device.Mat // SAGE: F̃ redistributed to H's layout (rows R, cols Q)
	// Mixed precision (mixed.go): H, W, W_self, the SAGE input and dZ
	// rounded to bfloat16, each once.
	hb, wb, wsb, selfb, dzb device.MatBF16
	dzbOK                   bool
	dzbInto                 device.Buffer[uint16] // where dzb goes, when not a new take (reuse.go)
	u                       device.Mat            // RMSNorm: Z/rms
	rms                     device.Buffer[float32]
	act                     device.Mat // output of the ReLU (rows R, cols P)
	pos                     mask       // where act > 0, when the ReLU recorded it
	// actb: the ReLU's output in bfloat16 only (actbOK; reuse.go's
	// actBF16), act unset. dzbIn: the backward pass left the next layer's
	// dF̃ in actb (dfInActBF16), this layer's dZ once masked, or masked
	// already (dzbMasked: with dropout).
	actb                     device.MatBF16
	actbOK, dzbIn, dzbMasked bool
	// hDead: in mixed precision, H summed in float32 before it was
	// rounded into hb, dead since (reuse.go's zInH).
	hDead device.Mat
	gat   gatTape // a GAT layer's (gat.go)
}

// mask is a recorded dropout mask; ok is false where no dropout applied.
type mask struct {
	bits device.Buffer[uint64]
	ok   bool
}

// forward runs the model on this rank's blocks and returns the local block
// of the logits (rows and classes as logitsAxes says) and the tape.
func (m *Model) forward(training bool, step int) (*tape, error) {
	return m.forwardTo(training, step, len(m.specs)-1)
}

// forwardTo is forward up to layer last, with the output head only when
// last is the final layer; the tape holds layer last's output untouched
// (Embeddings).
func (m *Model) forwardTo(training bool, step, last int) (*tape, error) {
	cfg, g, b := m.Cfg, m.g, m.cur
	sh, ar := b.sh, b.ar
	if !b.reserved {
		ar.reserve(m.arenaPlan(b, training))
		b.reserved = true
	}
	ar.reset()
	tp := &m.tp
	tp.step, tp.training = step, training
	tp.scratch, tp.df = device.Buffer[float32]{}, device.Buffer[float32]{}
	r0, r1 := sh.rows(g, 1, grid.X)
	width := 0
	if cfg.InputProjection {
		width = m.Params[0].R1 - m.Params[0].R0
	} else if len(b.layers) > 0 {
		width = b.layers[0].dIn
	}
	// x is the next layer's input; xb the features while they are in
	// bfloat16 and not yet read (features_bf16.go), or the previous
	// layer's bfloat16 output (xbAct), which went through this layer's
	// dropout already, with mask xbKeep (transformReLUBF16).
	var x device.Mat
	var xb device.MatBF16
	var xbAct bool
	var xbKeep mask
	inBF16 := m.Options.FeaturesBF16
	if inBF16 {
		xb = device.MatrixBF16(b.xb, r1-r0, width)
	} else {
		x = device.Matrix(b.x, r1-r0, width)
	}
	tp.projInBF16 = false
	if cfg.InputProjection {
		// Features [rows X, cols Z] · W [rows Z, cols Y] summed over Z lands
		// in layer 0's input layout [rows X, cols Y].
		p := m.Params[0]
		out := ar.mat(r1-r0, p.C1-p.C0)
		if inBF16 {
			m.timed(&m.Times.GEMM, func() { m.dev.GemmBF16(spmm.NoTrans, spmm.NoTrans, 1, xb, m.packed(p.mat(p.W)), 0, out) })
			tp.projInB, tp.projInBF16 = xb, true
		} else {
			m.gemm(spmm.NoTrans, spmm.NoTrans, x, p.mat(p.W), out)
			tp.projIn = x
		}
		if err := m.pmmAllReduce(g.ZComm, out); err != nil {
			return nil, err
		}
		x, inBF16 = out, false
	}
	for l := range last + 1 {
		d := &b.layers[l]
		lt := &tp.layers[l]
		*lt = layerTape{}
		verts := b.verts[l]
		dropped := false
		switch {
		case !inBF16 || xbAct || m.input0Direct(d, training):
		case input0DropBF16(d.spec, training && m.Cfg.Dropout > 0, m.selfInInput()):
			// Dropped into bfloat16 a block at a time (features_bf16.go).
			xb = m.dropFeaturesBF16(xb, d, verts, step)
		default:
			x, dropped = m.widenInput0(xb, d, verts, training, step)
			inBF16 = false
		}
		switch {
		case inBF16:
			// The aggregation reads the features themselves, or the
			// previous layer's output, dropped already.
			lt.inB, lt.inBOK = xb, true
			lt.keep = xbKeep
			inBF16, xbAct, xbKeep = false, false, mask{}
		case dropped:
			lt.inDrop = x
		case d.spec.needInputGrad:
			// The backward pass masks this layer's input gradient with the
			// same draws: keep them.
			lt.inDrop, lt.keep = m.dropoutKeep(x, verts, d.in0, training, step, l)
		default:
			lt.inDrop = m.dropout(x, verts, d.in0, training, step, l)
		}
		if d.spec.heads > 0 {
			out, err := m.gatForward(d, lt, lt.inDrop, l, training, step)
			if err != nil {
				return nil, err
			}
			x = out
			continue
		}

		if err := m.aggregate(d, lt); err != nil {
			return nil, err
		}
		if d.spec.self {
			// SAGE: Z = H·W_neigh + F̃_R·W_self, where F̃_R is the input
			// (after dropout) in H's layout, rows R of the output order
			// and columns Q: both products are partial sums over Q, so
			// the one all-reduce of Z sums them together. (F̃
			// in bfloat16, lt.inB, is F̃_R too: selfInInput.)
			if m.selfInInput() {
				lt.self = lt.inDrop // reuse.go
			} else {
				lt.self = ar.mat(d.nR, d.dIn)
				src := sh.layout(grid.InputOrder(l), d.p, d.q, d.spec.in)
				dst := sh.layout(grid.OutputOrder(l), d.r, d.q, d.spec.in)
				if err := m.redistribute(lt.self, dst, lt.inDrop, src, grid.InputOrder(l)); err != nil {
					return nil, err
				}
			}
		}
		if m.actBF16(d, l, last) {
			// Z a block at a time, rectified, dropped and rounded into
			// the bfloat16 output, which the next layer aggregates
			// directly (reuse.go).
			var prev device.Buffer[uint16]
			if l > 0 && tp.layers[l-1].actbOK {
				prev = tp.layers[l-1].actb.Flat()
			}
			var drop device.Dropout // the next layer's input dropout
			if training && cfg.Dropout > 0 {
				drop = m.dropSpec(b.verts[l+1], b.layers[l+1].in0, step, l+1)
			}
			xbKeep = m.transformReLUBF16(d, lt, prev, drop)
			x, xb, inBF16, xbAct = device.Mat{}, lt.actb, true, true
			continue
		}
		var z device.Mat
		switch {
		case m.zInInput(d, l, x):
			// Into the input's memory, dead now (reuse.go).
			z = device.Matrix(x.Flat().Slice(0, d.nR*d.dOut), d.nR, d.dOut)
		case zInH(lt.hDead.Rows()*lt.hDead.Cols(), d.nR*d.dOut):
			// Into H's float32 sum, dead once rounded (reuse.go).
			z = device.Matrix(lt.hDead.Flat().Slice(0, d.nR*d.dOut), d.nR, d.dOut)
		default:
			z = ar.mat(d.nR, d.dOut)
		}
		m.transform(d, lt, z)
		if err := m.pmmAllReduce(g.Comm(d.q), z); err != nil {
			return nil, err
		}
		out := z
		if d.spec.hidden {
			// The ReLU runs in place: its output marks the same entries
			// positive as its input, which is all the backward pass asks.
			if d.spec.norm {
				if err := m.rmsNormReLU(lt, z, d); err != nil {
					return nil, err
				}
			} else {
				// The backward pass reads the positions, 1 bit an
				// element, rather than act's 32.
				lt.pos = mask{bits: ar.u64.take(m.dev, d.nR*((d.dOut+63)/64)), ok: true}
				m.dev.ReLURecord(z, z, lt.pos.bits)
			}
			lt.act = z
			if d.spec.residual {
				res := ar.mat(d.nR, d.dOut)
				src := sh.layout(grid.InputOrder(l), d.p, d.q, d.spec.in)
				dst := sh.layout(grid.OutputOrder(l), d.r, d.p, d.spec.out)
				if err := m.redistribute(res, dst, x, src, grid.InputOrder(l)); err != nil {
					return nil, err
				}
				out = ar.mat(d.nR, d.dOut)
				m.dev.Add(out, z, res)
			}
		}
		x = out
	}
	if cfg.OutputHead && last == len(m.specs)-1 {
		// Input [rows P_L, cols Q_L] · W [rows Q_L, cols R_L], summed over Q_L.
		p := m.Params[len(m.Params)-1]
		pa, qa, _ := grid.Rotation(cfg.Layers)
		r0, r1 := sh.rows(g, grid.OutputOrder(cfg.Layers-1), pa)
		tp.headIn, tp.headKeep = m.dropoutKeep(x, b.headVerts, p.R0, training, step, cfg.headSite())
		out := ar.mat(r1-r0, p.C1-p.C0)
		m.gemm(spmm.NoTrans, spmm.NoTrans, tp.headIn, p.mat(p.W), out)
		if err := m.pmmAllReduce(g.Comm(qa), out); err != nil {
			return nil, err
		}
		x = out
	}
	tp.logits = x
	return tp, nil
}

// selfInInput is reuse.go's rule on this model's grid and shards.
func (m *Model) selfInInput() bool {
	return selfInInput(m.g.X*m.g.Y*m.g.Z, m.Options.SingleOrder)
}

// rmsNormReLU normalises each row of z (rows R, cols P) by its root mean
// square over all columns — a sum of squares all-reduced over P —,
// multiplies by the learnable scale and applies the ReLU, in place.
func (m *Model) rmsNormReLU(lt *layerTape, z device.Mat, d *layerDims) error {
	ar := m.cur.ar
	ss := ar.vec(d.nR)
	m.dev.SumSquares(ss, z)
	if err := m.allReduce(m.g.Comm(d.p), ss); err != nil {
		return err
	}
	lt.rms = ar.vec(d.nR)
	lt.u = ar.mat(d.nR, d.dOut)
	m.dev.RMSNormApply(z, lt.u, lt.rms, z, ss, d.norm.W, m.norm(d), true)
	return nil
}

// redistribute moves src, whose rows are in vertex order k, into dst, in
// the other layout and order 1-k: grid.Redistribute through package
// device, or, where one rank holds every block of the replica, a row
// permutation on the device (dst row j is src row rowMaps[1-k][j], the
// inverse of the map the grid would scatter by), which moves the same
// bits without a send plan.
func (m *Model) redistribute(dst device.Mat, dstL grid.Layout, src device.Mat, srcL grid.Layout, k int) error {
	b := m.cur
	if m.g.X*m.g.Y*m.g.Z == 1 {
		if b.rowMaps[1-k] != nil {
			m.dev.GatherRows(dst, src, b.inv[1-k])
		} else {
			m.dev.Copy(dst, src)
		}
		return nil
	}
	return device.Redistribute(m.dev, m.g, dst.Flat(), dstL, src.Flat(), srcL, b.rowMaps[k])
}

func (m *Model) norm(d *layerDims) device.RMSNorm {
	return device.RMSNorm{N: d.spec.out, Eps: NormEps}
}
