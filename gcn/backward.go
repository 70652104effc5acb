package gcn

import (
	"scalegnn/grid"
	"scalegnn/spmm"
)

// backward propagates dLogits (the local block of ∂loss/∂logits) through the
// tape and leaves every parameter's gradient, all-reduced over its replicas,
// in Param.G.
func (m *Model) backward(tp *tape, dLogits []float32) error {
	cfg, g, sh := m.Cfg, m.g, m.sh
	d := dLogits
	if cfg.OutputHead {
		p := m.Params[len(m.Params)-1]
		pa, _, ra := grid.Rotation(cfg.Layers)
		r0, r1 := sh.rows(g, grid.OutputOrder(cfg.Layers-1), pa)
		rows, in, out := r1-r0, p.R1-p.R0, p.C1-p.C0
		// dW = AllReduce_a(Xᵀ·dOut), dX = AllReduce_c(dOut·Wᵀ): orthogonal
		// groups, so with overlap dX's sum runs while dW is computed.
		dx := make([]float32, rows*in)
		m.gemm(spmm.NoTrans, spmm.Trans, dense(d, rows, out), p.dense(), dense(dx, rows, in))
		waitDX, err := m.startOrNot(g.Comm(ra), dx)
		if err != nil {
			return err
		}
		m.gemm(spmm.Trans, spmm.NoTrans, dense(tp.headIn, rows, in), dense(d, rows, out), dense(p.G, in, out))
		if err := m.allReduce(g.Comm(pa), p.G); err != nil {
			return err
		}
		if err := waitDX(); err != nil {
			return err
		}
		d = m.applyKeep(dx, tp.headKeep, in)
	}
	for l := cfg.Layers - 1; l >= 0; l-- {
		dm, lt := m.layers[l], tp.layers[l]
		var dRes []float32
		dz := d
		if dm.spec.hidden {
			if dm.spec.residual {
				dRes = d
			}
			da := make([]float32, len(d))
			for k, a := range lt.act {
				if a > 0 {
					da[k] = d[k]
				}
			}
			dz = da
			if dm.spec.norm {
				var err error
				if dz, err = m.rmsNormBackward(lt, da, dm); err != nil {
					return err
				}
			}
		}
		w := dm.weight
		dW := func() {
			m.gemm(spmm.Trans, spmm.NoTrans, dense(lt.h, dm.nR, dm.dIn), dense(dz, dm.nR, dm.dOut), dense(w.G, dm.dIn, dm.dOut))
		}
		if !dm.spec.needInputGrad {
			// dW = AllReduce_R(Hᵀ·dZ) is all the first layer needs.
			dW()
			if err := m.allReduce(g.Comm(dm.r), w.G); err != nil {
				return err
			}
			break
		}
		// dH = AllReduce_P(dZ·Wᵀ), dW = AllReduce_R(Hᵀ·dZ), dF̃ =
		// AllReduce_R(Âᵀ·dH). With overlap, dH's sum runs while dW is
		// computed and dW's while dH's SpMM runs (P and R are orthogonal);
		// dW is complete before dF̃'s sum, which shares its group.
		dh := make([]float32, dm.nR*dm.dIn)
		m.gemm(spmm.NoTrans, spmm.Trans, dense(dz, dm.nR, dm.dOut), w.dense(), dense(dh, dm.nR, dm.dIn))
		var waitDH, waitDW func() error
		var err error
		if m.Options.Overlap {
			if waitDH, err = m.startAllReduce(g.Comm(dm.p), dh, true); err != nil {
				return err
			}
			dW()
			if waitDW, err = m.startAllReduce(g.Comm(dm.r), w.G, false); err != nil {
				return err
			}
			if err := waitDH(); err != nil {
				return err
			}
		} else {
			dW()
			if err := m.allReduce(g.Comm(dm.r), w.G); err != nil {
				return err
			}
			if err := m.pmmAllReduce(g.Comm(dm.p), dh); err != nil {
				return err
			}
		}
		df := make([]float32, dm.nP*dm.dIn)
		m.spmm(dense(df, dm.nP, dm.dIn), dm.shard.at, dense(dh, dm.nR, dm.dIn))
		if waitDW != nil {
			if err := waitDW(); err != nil {
				return err
			}
		}
		if err := m.pmmAllReduce(g.Comm(dm.r), df); err != nil {
			return err
		}
		df = m.applyKeep(df, lt.keep, dm.dIn)
		if dRes != nil {
			// The residual's gradient flows back through the inverse
			// redistribution: output layout (rows R, cols P) to input
			// layout (rows P, cols Q), output order to input order.
			back := make([]float32, len(df))
			src := sh.layout(grid.OutputOrder(l), dm.r, dm.p, dm.spec.out)
			dst := sh.layout(grid.InputOrder(l), dm.p, dm.q, dm.spec.in)
			if err := g.Redistribute(back, dst, dRes, src, m.rowMaps[grid.OutputOrder(l)]); err != nil {
				return err
			}
			for k := range df {
				df[k] += back[k]
			}
		}
		d = df
	}
	if cfg.InputProjection {
		// dW = AllReduce_X(Featuresᵀ·d): rows X, cols Z and Y.
		p := m.Params[0]
		r0, r1 := sh.rows(g, 1, grid.X)
		m.gemm(spmm.Trans, spmm.NoTrans, dense(tp.projIn, r1-r0, p.R1-p.R0), dense(d, r1-r0, p.C1-p.C0), dense(p.G, p.R1-p.R0, p.C1-p.C0))
		if err := m.allReduce(g.XComm, p.G); err != nil {
			return err
		}
	}
	return nil
}

// rmsNormBackward returns ∂loss/∂Z from ∂loss/∂(norm output) and adds the
// scale's gradient (summed over rows, all-reduced over R) to its G.
func (m *Model) rmsNormBackward(lt layerTape, da []float32, d layerDims) ([]float32, error) {
	gp := d.norm
	clear(gp.G)
	dot := make([]float32, d.nR)
	for i := 0; i < d.nR; i++ {
		var s float32
		for j := 0; j < d.dOut; j++ {
			k := i*d.dOut + j
			gp.G[j] += da[k] * lt.u[k]
			s += da[k] * gp.W[j] * lt.u[k]
		}
		dot[i] = s
	}
	if err := m.allReduce(m.g.Comm(d.r), gp.G); err != nil {
		return nil, err
	}
	if err := m.allReduce(m.g.Comm(d.p), dot); err != nil {
		return nil, err
	}
	dz := make([]float32, len(da))
	inv := 1 / float32(d.spec.out)
	for i := 0; i < d.nR; i++ {
		for j := 0; j < d.dOut; j++ {
			k := i*d.dOut + j
			dz[k] = (da[k]*gp.W[j] - lt.u[k]*dot[i]*inv) / lt.rms[i]
		}
	}
	return dz, nil
}
