package gcn

import (
	"time"

	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/spmm"
)

// The GCN and SAGE layers' products in mixed precision (Options.Precision
// = device.BF16). The device would round every operand at each product
// anyway (device.BF16Products); here each operand is rounded once into
// the arena and read by every product that needs it, with the same
// roundings at the same places (Reference.BF16), so the results are the
// same bit for bit:
//
//   - F̃ (the layer input after dropout) in the device's staging, for the
//     aggregation alone;
//   - H = Â·F̃ is kept in bfloat16 only (lt.hb), rounded once: by the
//     SpMM itself where the aggregation needs no all-reduce (P of size
//     1, device.SpMMToBF16), else after it; the forward H·W and the
//     backward Hᵀ·dZ read it;
//   - W and W_self once per step (lt.wb, lt.wsb), for Z and for dH, dS;
//   - SAGE's redistributed input once (lt.selfb), for Z and dW_self;
//   - dZ once (lt.dzb), for dH, dS, dW and dW_self.
//
// The other products (projection, head, GAT, the backward aggregation)
// go through the device's own rounding.

// mixed reports whether the layers run the mixed-precision forms.
func (m *Model) mixed() bool { return m.Options.Precision == device.BF16 }

// timed runs f and adds its time to *t, after the device's queued work
// (waitDevice), as spmm and gemm do.
func (m *Model) timed(t *time.Duration, f func()) {
	m.waitDevice()
	t0 := time.Now()
	f()
	m.waitDevice()
	*t += time.Since(t0)
}

// packed rounds src into a new bfloat16 matrix of the pass's arena.
func (m *Model) packed(src device.Mat) device.MatBF16 {
	dst := m.cur.ar.matBF16(src.Rows(), src.Cols())
	m.dev.PackMatBF16(dst, src)
	return dst
}

// aggregate computes layer d's H = Â·F̃ (summed over P) into the tape:
// lt.h, or in mixed precision lt.hb.
func (m *Model) aggregate(d *layerDims, lt *layerTape) error {
	g, ar := m.g, m.cur.ar
	if !m.mixed() {
		lt.h = ar.mat(d.nR, d.dIn)
		m.spmm(lt.h, d.a, lt.inDrop)
		return m.pmmAllReduce(g.Comm(d.p), lt.h)
	}
	lt.hb = ar.matBF16(d.nR, d.dIn)
	if lt.inBOK {
		// The bfloat16 features themselves: no staging.
		if g.Comm(d.p).Size() == 1 {
			m.timed(&m.Times.SpMM, func() { m.dev.SpMMBF16ToBF16(lt.hb, d.a, lt.inB) })
			return nil
		}
		h := ar.mat(d.nR, d.dIn)
		m.timed(&m.Times.SpMM, func() { m.dev.SpMMBF16(h, d.a, lt.inB) })
		if err := m.pmmAllReduce(g.Comm(d.p), h); err != nil {
			return err
		}
		m.timed(&m.Times.GEMM, func() { m.dev.PackMatBF16(lt.hb, h) })
		lt.hDead = h
		return nil
	}
	if g.Comm(d.p).Size() == 1 {
		// F̃ is rounded in the device's staging, H once as the SpMM
		// writes it.
		m.timed(&m.Times.SpMM, func() { device.SpMMToBF16(m.dev, lt.hb, d.a, lt.inDrop) })
		return nil
	}
	h := ar.mat(d.nR, d.dIn)
	m.spmm(h, d.a, lt.inDrop)
	if err := m.pmmAllReduce(g.Comm(d.p), h); err != nil {
		return err
	}
	m.timed(&m.Times.GEMM, func() { m.dev.PackMatBF16(lt.hb, h) })
	lt.hDead = h
	return nil
}

// transform computes layer d's local Z = H·W, and for SAGE adds the
// redistributed input's F̃_R·W_self (lt.self).
func (m *Model) transform(d *layerDims, lt *layerTape, z device.Mat) {
	if !m.mixed() {
		m.gemm(spmm.NoTrans, spmm.NoTrans, lt.h, d.weight.mat(d.weight.W), z)
		if d.spec.self {
			m.gemmAdd(spmm.NoTrans, spmm.NoTrans, lt.self, d.self.mat(d.self.W), z)
		}
		return
	}
	m.timed(&m.Times.GEMM, func() {
		lt.wb = m.packed(d.weight.mat(d.weight.W))
		m.dev.GemmBF16(spmm.NoTrans, spmm.NoTrans, 1, lt.hb, lt.wb, 0, z)
		if d.spec.self {
			m.selfOperands(d, lt)
			m.dev.GemmBF16(spmm.NoTrans, spmm.NoTrans, 1, lt.selfb, lt.wsb, 1, z)
		}
	})
}

// selfOperands rounds a SAGE layer's self-term operands once: F̃_R into
// lt.selfb (unless F̃ is bfloat16 already and F̃_R is F̃: input0Direct,
// or the previous layer's bfloat16 output) and W_self into lt.wsb.
func (m *Model) selfOperands(d *layerDims, lt *layerTape) {
	if lt.inBOK {
		lt.selfb = lt.inB
	} else {
		lt.selfb = m.packed(lt.self)
	}
	lt.wsb = m.packed(d.self.mat(d.self.W))
}

// inputGrads computes dH = dZ·Wᵀ into dh and for SAGE dS = dZ·W_selfᵀ
// into ds (local partial sums over Q); an empty dh or ds is computed
// elsewhere (reuse.go: dhbInH, dsInDF).
func (m *Model) inputGrads(d *layerDims, lt *layerTape, dz, dh, ds device.Mat) {
	if !m.mixed() {
		if dh.Rows() > 0 {
			m.gemm(spmm.NoTrans, spmm.Trans, dz, d.weight.mat(d.weight.W), dh)
		}
		if ds.Rows() > 0 {
			m.gemm(spmm.NoTrans, spmm.Trans, dz, d.self.mat(d.self.W), ds)
		}
		return
	}
	m.timed(&m.Times.GEMM, func() {
		if dh.Rows() > 0 {
			m.dev.GemmBF16(spmm.NoTrans, spmm.Trans, 1, m.dzBF16(lt, dz), lt.wb, 0, dh)
		}
		if ds.Rows() > 0 {
			m.dev.GemmBF16(spmm.NoTrans, spmm.Trans, 1, m.dzBF16(lt, dz), lt.wsb, 0, ds)
		}
	})
}

// selfInputGradInto adds a SAGE layer's dS = dZ·W_selfᵀ into df, dF̃,
// by the GEMM that computes it (reuse.go's dsInDF): no matrix for dS.
func (m *Model) selfInputGradInto(d *layerDims, lt *layerTape, dz, df device.Mat) {
	if !m.mixed() {
		m.gemmAdd(spmm.NoTrans, spmm.Trans, dz, d.self.mat(d.self.W), df)
		return
	}
	m.timed(&m.Times.GEMM, func() {
		m.dev.GemmBF16(spmm.NoTrans, spmm.Trans, 1, m.dzBF16(lt, dz), lt.wsb, 1, df)
	})
}

// inputGradsBF16 computes dH = dZ·Wᵀ rounded to bfloat16 into the
// layer's H (reuse.go's dhbInH), through the pass's scratch.
func (m *Model) inputGradsBF16(d *layerDims, lt *layerTape, dz device.Mat) {
	scratch := m.scratch(d.nR, d.dIn)
	m.timed(&m.Times.GEMM, func() {
		device.GemmBF16ToBF16(m.dev, spmm.Trans, 1, m.dzBF16(lt, dz), lt.wb, lt.hb, scratch, nil)
	})
}

// transformReLUBF16 computes layer d's output ReLU(H·W), for SAGE
// ReLU(H·W + F̃_R·W_self), in bfloat16 only
// (reuse.go's actBF16) into lt.actb, in prev's memory where it fits
// (actbInPrev), a block of rows at a time through the pass's scratch
// (device.GemmBF16ToBF16, the ReLU recording the positions of each block
// before it is rounded). Where drop has a P (training with dropout: the
// next layer's input dropout, its Verts every row's), each block then
// goes through it, recording the mask returned, so that lt.actb is the
// next layer's F̃; else the mask is unset. The time counts as GEMM time:
// the ReLU, the dropout and the rounding of a block that is still in
// cache are a small part of it.
func (m *Model) transformReLUBF16(d *layerDims, lt *layerTape, prev device.Buffer[uint16], drop device.Dropout) mask {
	ar := m.cur.ar
	if n := d.nR * d.dOut; actbInPrev(d.spec, int64(n), int64(prev.Len())) {
		lt.actb = device.MatrixBF16(prev.Slice(0, n), d.nR, d.dOut)
	} else {
		lt.actb = ar.matBF16(d.nR, d.dOut)
	}
	lt.actbOK = true
	wpr := (d.dOut + 63) / 64
	lt.pos = mask{bits: ar.u64.take(m.dev, d.nR*wpr), ok: true}
	var keep mask
	if drop.P > 0 {
		keep = mask{bits: ar.u64.take(m.dev, d.nR*wpr), ok: true}
	}
	scratch := m.scratch(d.nR, d.dOut)
	m.timed(&m.Times.GEMM, func() {
		lt.wb = m.packed(d.weight.mat(d.weight.W))
		if d.spec.self {
			m.selfOperands(d, lt)
		}
		device.GemmBF16ToBF16(m.dev, spmm.NoTrans, 1, lt.hb, lt.wb, lt.actb, scratch, func(r0, r1 int, s device.Mat) {
			if d.spec.self {
				// SAGE: + F̃_R·W_self, the block's rows (a row's sums
				// do not depend on the block: the same bits as whole).
				m.dev.GemmBF16(spmm.NoTrans, spmm.NoTrans, 1, lt.selfb.Slice(r0, r1, 0, d.dIn), lt.wsb, 1, s)
			}
			m.dev.ReLURecord(s, s, lt.pos.bits.Slice(r0*wpr, r1*wpr))
			if keep.ok {
				blk := drop
				blk.Verts = drop.Verts.Slice(r0, r1)
				m.dev.DropoutRecord(s, s, keep.bits.Slice(r0*wpr, r1*wpr), blk)
			}
		})
	})
	return keep
}

// scratch is the pass's float32 scratch (tape.scratch) as a matrix of
// scratchRows(n, w) rows and w columns, taken again only where it is
// smaller (arenaPlan.scratchFor mirrors this).
func (m *Model) scratch(n, w int) device.Mat {
	rows := scratchRows(n, w)
	scr := &m.tp.scratch
	if scr.Len() < rows*w {
		*scr = m.cur.ar.vec(rows * w)
	}
	return device.Matrix(scr.Slice(0, rows*w), rows, w)
}

// scratchElems bounds the float32 scratch through which a product is
// rounded: 4 MiB, a small part of any matrix worth rounding this way,
// large enough that a block is many rows (8,192 at width 128). A
// variable so that tests can cut their small matrices into many blocks.
var scratchElems = 1 << 20

// scratchRows is the rows of that scratch for a product of n rows and w
// columns.
func scratchRows(n, w int) int { return max(1, min(n, scratchElems/max(w, 1))) }

// scratchFor mirrors Model.scratch: a new one where a product needs more
// than the pass has taken.
func (p *arenaPlan) scratchFor(n, w int) {
	if k := int64(scratchRows(n, w)) * int64(w); k > p.scratch {
		p.use.F32 += k
		p.scratch = k
	}
}

// actBF16 is reuse.go's rule for layer d (index l) of a pass ending at
// layer last.
func (m *Model) actBF16(d *layerDims, l, last int) bool {
	return !m.actF32 && actBF16(m.specs, l, last, m.Options.Precision, m.g.Comm(d.q).Size(), m.selfInInput())
}

// weightGrads computes the local partial sums of layer dm's weight
// gradients from dZ: Hᵀ·dZ, and for SAGE F̃_Rᵀ·dZ into W_self's.
func (m *Model) weightGrads(lt *layerTape, dm *layerDims, dz device.Mat) {
	w := dm.weight
	if !m.mixed() {
		m.gemm(spmm.Trans, spmm.NoTrans, lt.h, dz, w.mat(w.G))
		if dm.spec.self {
			m.gemm(spmm.Trans, spmm.NoTrans, lt.self, dz, dm.self.mat(dm.self.G))
		}
		return
	}
	m.timed(&m.Times.GEMM, func() {
		m.dev.GemmBF16(spmm.Trans, spmm.NoTrans, 1, lt.hb, m.dzBF16(lt, dz), 0, w.mat(w.G))
		if dm.spec.self {
			m.dev.GemmBF16(spmm.Trans, spmm.NoTrans, 1, lt.selfb, lt.dzb, 0, dm.self.mat(dm.self.G))
		}
	})
}

// dzBF16 is dZ rounded, once per layer and pass (lt.dzb).
func (m *Model) dzBF16(lt *layerTape, dz device.Mat) device.MatBF16 {
	if !lt.dzbOK {
		if n := dz.Rows() * dz.Cols(); lt.dzbInto.Len() >= n {
			lt.dzb = device.MatrixBF16(lt.dzbInto.Slice(0, n), dz.Rows(), dz.Cols())
			m.dev.PackMatBF16(lt.dzb, dz)
		} else {
			lt.dzb = m.packed(dz)
		}
		lt.dzbOK = true
	}
	return lt.dzb
}

// mixedAggregate mirrors aggregate's arena takes and staging in mixed
// precision (arenaPlan).
func (p *arenaPlan) mixedAggregate(nP, nR, dIn int, pa grid.Axis, direct bool) {
	if !direct {
		p.spmmOp(nP, dIn) // F̃ in the device's staging
	}
	p.use.U16 += int64(nR) * int64(dIn) // H
	if p.s.Size(pa) > 1 {
		p.mat(nR, dIn) // H in float32 for its all-reduce
		p.pmm(pa, nR*dIn)
	}
}

// zInInput is reuse.go's rule for layer d (index l) of this pass, whose
// input is x.
func (m *Model) zInInput(d *layerDims, l int, x device.Mat) bool {
	return zInInput(m.specs, l, m.Options.Precision, m.Options.Overlap, m.g.Comm(d.p).Size(), d.dIn, d.dOut, d.nR, x.Rows()*x.Cols())
}

// dfMaskedBF16 computes layer d's dF̃ = Âᵀ·dH into the previous layer's
// bfloat16 output, in training with dropout (reuse.go's dfInActBF16):
// each float32 sum masked by layer d's dropout (lt.keep, kept entries
// scaled) and then by the previous layer's ReLU (prev.pos) before it is
// rounded (device.SpMMBF16ToBF16Masked), which makes it the previous
// layer's dZ, rounded, as the float32 path computes it. dH is the
// layer's bfloat16 H where dhbInH put it there, else the float32 dh,
// rounded once into the arena as the device would round it.
func (m *Model) dfMaskedBF16(d *layerDims, lt, prev *layerTape, dh device.Mat, dhbInH bool) {
	m.timed(&m.Times.SpMM, func() {
		b := lt.hb
		if !dhbInH {
			b = m.packed(dh)
		}
		m.dev.SpMMBF16ToBF16Masked(prev.actb, d.at, b, lt.keep.bits, prev.pos.bits, m.Cfg.Dropout)
	})
	prev.dzbMasked = true
}

// dfSelfBF16 computes a SAGE layer d's dF̃ = Âᵀ·dH + dS into the
// previous layer's bfloat16 output (reuse.go's dfInActBF16 with dsInDF):
// the SpMM reads dH from the layer's bfloat16 H (dhbInH) into the pass's
// one float32 dF̃ buffer (dfBuf), dS adds by its GEMM, and the sum is
// masked by d's dropout (lt.keep) and the previous layer's ReLU and
// rounded: the operations of the float32 path, in its order, so the
// previous layer's rounded dZ has the same bits.
func (m *Model) dfSelfBF16(d *layerDims, lt, prev *layerTape, dz device.Mat, dhbInH bool) {
	if !dhbInH {
		panic("gcn: a SAGE layer's dF̃ into a bfloat16 output without its dH in H")
	}
	df := m.dfBuf(d.nP, d.dIn)
	m.timed(&m.Times.SpMM, func() { m.dev.SpMMBF16(df, d.at, lt.hb) })
	m.selfInputGradInto(d, lt, dz, df)
	m.applyKeep(df, lt.keep)
	m.dev.ReLUBackwardBits(df, df, prev.pos.bits)
	m.timed(&m.Times.GEMM, func() { m.dev.PackMatBF16(prev.actb, df) })
	prev.dzbMasked = true
}

// dfBuf is the pass's float32 dF̃ buffer (tape.df) as a rows × cols
// matrix, taken again only where it is smaller (arenaPlan.dfFor mirrors
// this): the SAGE layers that compute dF̃ into a bfloat16 output share it.
func (m *Model) dfBuf(rows, cols int) device.Mat {
	b := &m.tp.df
	if b.Len() < rows*cols {
		*b = m.cur.ar.vec(rows * cols)
	}
	return device.Matrix(b.Slice(0, rows*cols), rows, cols)
}

// dfFor mirrors Model.dfBuf.
func (p *arenaPlan) dfFor(n int64) {
	if n > p.df {
		p.use.F32 += n
		p.df = n
	}
}
