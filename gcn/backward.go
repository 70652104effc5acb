package gcn

import (
	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/spmm"
)

// backward propagates dLogits (the local block of ∂loss/∂logits) through the
// tape and leaves every parameter's gradient, all-reduced over its replicas,
// in Param.G.
func (m *Model) backward(tp *tape, dLogits device.Mat) error {
	cfg, g, b := m.Cfg, m.g, m.cur
	sh, ar := b.sh, b.ar
	d := dLogits
	if cfg.OutputHead {
		p := m.Params[len(m.Params)-1]
		pa, _, ra := grid.Rotation(cfg.Layers)
		r0, r1 := sh.rows(g, grid.OutputOrder(cfg.Layers-1), pa)
		// dW = AllReduce_a(Xᵀ·dOut), dX = AllReduce_c(dOut·Wᵀ): orthogonal
		// groups, so with overlap dX's sum runs while dW is computed.
		dx := ar.mat(r1-r0, p.R1-p.R0)
		m.gemm(spmm.NoTrans, spmm.Trans, d, p.mat(p.W), dx)
		reqDX, err := m.startOrNot(g.Comm(ra), dx)
		if err != nil {
			return err
		}
		m.gemm(spmm.Trans, spmm.NoTrans, tp.headIn, d, p.mat(p.G))
		if err := m.allReduce(g.Comm(pa), p.G); err != nil {
			return err
		}
		if err := m.wait(reqDX); err != nil {
			return err
		}
		d = m.applyKeep(dx, tp.headKeep)
	}
	for l := cfg.Layers - 1; l >= 0; l-- {
		dm, lt := &b.layers[l], &tp.layers[l]
		if dm.spec.heads > 0 {
			dx, err := m.gatBackward(dm, lt, d, l)
			if err != nil {
				return err
			}
			if !dm.spec.needInputGrad {
				break
			}
			d = m.applyKeep(dx, lt.keep)
			continue
		}
		var dRes device.Mat
		residual := dm.spec.hidden && dm.spec.residual
		dz := d
		if lt.dzbIn {
			// The next layer left dF̃ in bfloat16 in this layer's output
			// (dfInActBF16): masked there, or already (dzbMasked), it is
			// dZ rounded, and no float32 dZ exists.
			if !lt.dzbMasked {
				m.dev.ReLUBackwardBitsBF16(lt.actb, lt.actb, lt.pos.bits)
			}
			lt.dzb, lt.dzbOK = lt.actb, true
			dz = device.Mat{}
		} else if dm.spec.hidden {
			da := d // in place, unless the residual still needs d
			if residual {
				dRes = d
				da = ar.mat(d.Rows(), d.Cols())
			}
			if lt.pos.ok {
				m.dev.ReLUBackwardBits(da, d, lt.pos.bits)
			} else {
				m.dev.ReLUBackward(da, d, lt.act)
			}
			dz = da
			if dm.spec.norm {
				if err := m.rmsNormBackward(lt, da, dm); err != nil {
					return err
				}
			}
		}
		if l+1 < len(m.specs) && m.mixed() {
			next := tp.layers[l+1].hb.Flat()
			if dzInNextH(m.specs, l, m.Options.Precision, int64(dm.nR)*int64(dm.dOut), int64(next.Len())) {
				lt.dzbInto = next // layer l+1's H, dead (reuse.go)
			}
		}
		// wg is the layer's weight gradients: dW, and for SAGE dW_self
		// right after it in the gradient buffer (paramShapes), summed
		// over R by one all-reduce.
		wg := m.layerGrads(dm)
		if !dm.spec.needInputGrad {
			// dW = AllReduce_R(Hᵀ·dZ) is all the first layer needs.
			m.weightGrads(lt, dm, dz)
			if err := m.allReduce(g.Comm(dm.r), wg); err != nil {
				return err
			}
			break
		}
		// dH = AllReduce_P(dZ·Wᵀ), dW = AllReduce_R(Hᵀ·dZ), dF̃ =
		// AllReduce_R(Âᵀ·dH). With overlap, dH's sum runs while dW is
		// computed and dW's while dH's SpMM runs (P and R are orthogonal);
		// dW is complete before dF̃'s sum, which shares its group.
		// SAGE also needs dS = AllReduce_P(dZ·W_selfᵀ), the gradient of
		// the redistributed input: over a P group of several ranks it is
		// stacked under dH (same layout) so that one all-reduce over P
		// sums both; else it needs no sum (reuse.go's dsWhere).
		prevActB := l > 0 && tp.layers[l-1].actbOK
		pSize := g.Comm(dm.p).Size()
		ru := reuse(m.specs, l, m.Options.Precision, m.Options.Overlap, pSize, dm.dIn, dm.dOut, prevActB)
		dfb := prevActB && dfInActBF16(m.specs, l, g.Comm(dm.r).Size(), g.Comm(b.layers[l-1].p).Size())
		dsAt := dsWhere(dm.spec, pSize, m.selfInInput())
		rows := dm.nR
		if dsAt == dsStacked {
			rows *= 2
		}
		var dhs device.Mat
		switch {
		case ru.dhbInH:
			// dH in bfloat16, in H: dW reads H first (reuse.go).
			m.weightGrads(lt, dm, dz)
			m.inputGradsBF16(dm, lt, dz)
		case ru.dhInH:
			// H is dead once dW has read it (reuse.go).
			m.weightGrads(lt, dm, dz)
			dhs = lt.h
		case ru.dhInDZ:
			// dZ is dead once rounded (reuse.go).
			m.dzBF16(lt, dz)
			dhs = dz
		default:
			dhs = ar.mat(rows, dm.dIn)
		}
		var dh, ds device.Mat
		switch dsAt {
		case dsStacked:
			ds = dhs.Slice(dm.nR, rows, 0, dm.dIn)
		case dsOwn:
			ds = ar.mat(dm.nR, dm.dIn)
		}
		if !ru.dhbInH {
			dh = dhs.Slice(0, dm.nR, 0, dm.dIn)
		}
		m.inputGrads(dm, lt, dz, dh, ds)
		var reqDW collectives.Request
		switch {
		case m.Options.Overlap && !ru.dhInH && !ru.dhbInH:
			reqDH, err := m.startAllReduce(g.Comm(dm.p), dhs.Flat(), true)
			if err != nil {
				return err
			}
			m.weightGrads(lt, dm, dz)
			if reqDW, err = m.startAllReduce(g.Comm(dm.r), wg, false); err != nil {
				return err
			}
			if err := m.wait(reqDH); err != nil {
				return err
			}
		default:
			if !ru.dhInH && !ru.dhbInH { // else computed before dH overwrote H
				m.weightGrads(lt, dm, dz)
			}
			// With overlap (dH in H: P is one rank, nothing to sum) dW's
			// sum runs while dH's SpMM does.
			var err error
			if m.Options.Overlap {
				reqDW, err = m.startAllReduce(g.Comm(dm.r), wg, false)
			} else {
				err = m.allReduce(g.Comm(dm.r), wg)
			}
			if err != nil {
				return err
			}
			if !ru.dhbInH { // else P is one rank: nothing to sum
				if err := m.pmmAllReduce(g.Comm(dm.p), dhs); err != nil {
					return err
				}
			}
		}
		if dfb {
			// dF̃ in bfloat16 into the previous layer's output, masked
			// there as its dZ (reuse.go); nothing to sum.
			prev := &tp.layers[l-1]
			switch {
			case dsAt == dsInDF:
				// SAGE: dS adds before the masks, in float32.
				m.dfSelfBF16(dm, lt, prev, dz, ru.dhbInH)
			case lt.keep.ok:
				// With dropout, masked before it is rounded (reuse.go).
				m.dfMaskedBF16(dm, lt, prev, dh, ru.dhbInH)
			case ru.dhbInH:
				m.timed(&m.Times.SpMM, func() { m.dev.SpMMBF16ToBF16(prev.actb, dm.at, lt.hb) })
			default:
				m.timed(&m.Times.SpMM, func() { device.SpMMToBF16(m.dev, prev.actb, dm.at, dh) })
			}
			if err := m.wait(reqDW); err != nil {
				return err
			}
			prev.dzbIn = true
			d = device.Mat{}
			continue
		}
		var df device.Mat
		if ru.dfInAct {
			// Layer l-1's ReLU output, layer l's input: the forward
			// pass's alone (reuse.go).
			df = tp.layers[l-1].act
			if df.Rows() != dm.nP || df.Cols() != dm.dIn {
				panic("gcn: the previous layer's output is not shaped as this layer's input gradient")
			}
		} else {
			df = ar.mat(dm.nP, dm.dIn)
		}
		if ru.dhbInH {
			m.timed(&m.Times.SpMM, func() { m.dev.SpMMBF16(df, dm.at, lt.hb) })
		} else {
			m.spmm(df, dm.at, dh)
		}
		if err := m.wait(reqDW); err != nil {
			return err
		}
		if err := m.pmmAllReduce(g.Comm(dm.r), df); err != nil {
			return err
		}
		switch dsAt {
		case dsInDF:
			// F̃_R was F̃: dS is in dF̃'s layout and order (reuse.go).
			m.selfInputGradInto(dm, lt, dz, df)
		case dsStacked, dsOwn:
			// The self term's input gradient flows back through the
			// inverse of the forward redistribution; the dropout mask
			// applies to the sum, as F̃ fed both terms.
			back := ar.mat(dm.nP, dm.dIn)
			src := sh.layout(grid.OutputOrder(l), dm.r, dm.q, dm.spec.in)
			dst := sh.layout(grid.InputOrder(l), dm.p, dm.q, dm.spec.in)
			if err := m.redistribute(back, dst, ds, src, grid.OutputOrder(l)); err != nil {
				return err
			}
			m.dev.Add(df, df, back)
		}
		df = m.applyKeep(df, lt.keep)
		if residual {
			// The residual's gradient flows back through the inverse
			// redistribution: output layout (rows R, cols P) to input
			// layout (rows P, cols Q), output order to input order.
			back := ar.mat(dm.nP, dm.dIn)
			src := sh.layout(grid.OutputOrder(l), dm.r, dm.p, dm.spec.out)
			dst := sh.layout(grid.InputOrder(l), dm.p, dm.q, dm.spec.in)
			if err := m.redistribute(back, dst, dRes, src, grid.OutputOrder(l)); err != nil {
				return err
			}
			m.dev.Add(df, df, back)
		}
		d = df
	}
	if cfg.InputProjection {
		// dW = AllReduce_X(Featuresᵀ·d): rows X, cols Z and Y.
		p := m.Params[0]
		if tp.projInBF16 {
			m.timed(&m.Times.GEMM, func() { m.dev.GemmBF16(spmm.Trans, spmm.NoTrans, 1, tp.projInB, m.packed(d), 0, p.mat(p.G)) })
		} else {
			m.gemm(spmm.Trans, spmm.NoTrans, tp.projIn, d, p.mat(p.G))
		}
		if err := m.allReduce(g.XComm, p.G); err != nil {
			return err
		}
	}
	return nil
}

// rmsNormBackward turns da, ∂loss/∂(norm output), into ∂loss/∂Z in place
// and leaves the scale's gradient (summed over rows, all-reduced over R)
// in its G.
func (m *Model) rmsNormBackward(lt *layerTape, da device.Mat, d *layerDims) error {
	gp := d.norm
	dot := m.cur.ar.vec(d.nR)
	m.dev.RMSNormBackwardLocal(gp.G, dot, da, lt.u, gp.W)
	if err := m.allReduce(m.g.Comm(d.r), gp.G); err != nil {
		return err
	}
	if err := m.allReduce(m.g.Comm(d.p), dot); err != nil {
		return err
	}
	m.dev.RMSNormBackwardFinish(da, da, lt.u, gp.W, dot, lt.rms, m.norm(d))
	return nil
}

// layerGrads is the span of the gradient buffer that holds layer dm's
// weight gradients: W's, and W_self's right after it for SAGE.
func (m *Model) layerGrads(dm *layerDims) device.Buffer[float32] {
	if !dm.spec.self {
		return dm.weight.G
	}
	w, s := dm.weight, dm.self
	if s.gOff != w.gOff+w.Len() {
		panic("gcn: W_self's gradient does not follow W's in the gradient buffer")
	}
	return m.grads.Slice(w.gOff, s.gOff+s.Len())
}
