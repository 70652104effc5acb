package cagnet

import (
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/spmm"
)

// Mixed precision (train.precision = "bf16") in 1.5D. The device runs
// every product on bfloat16 operands (device.WithPrecision), which it
// would otherwise round into its staging product by product; here the
// GCN and SAGE layers keep in bfloat16 what only products read:
//
//   - (ÂH)_i, read by the layer's GEMM with W and by its weight gradient,
//     in ahb instead of a float32 ah;
//   - a hidden GCN or SAGE layer's output, when the next layer is one too
//     (KeepsOut): Z_i = (ÂH)_i·W (+ H_i·W_self) is computed a block of
//     rows at a time through a float32 scratch, rectified (positions
//     recorded in pos, one bit an element, for the backward pass), put
//     through the next layer's dropout in training, and rounded into zb,
//     which the next layer broadcasts and multiplies as it is;
//   - a SAGE layer's input (inb), its aggregation operand, which its self
//     term and that term's weight gradient read too;
//   - every aggregation operand (the input after dropout, the backward
//     pass's dZ·Wᵀ), which therefore travels as bfloat16 over the process
//     column whatever train.comm_dtype says: its bytes are what the SpMM
//     reads, so sending them rounded changes no bit. The all-reduce of the
//     partial sums still follows comm_dtype;
//   - dZ, rounded once for the weight gradient and dZ·Wᵀ, and the input
//     gradient into a layer that kept its output, masked by that layer's
//     dropout and ReLU and rounded (backwardMixed).
//
// A float32 input is dropped through the scratch a block of rows at a
// time into its bfloat16 operand. Every value is rounded where the staged
// products rounded it, once: the bits of the losses, gradients and
// weights are those of the same job on the same device with Precision
// float32 (TestMixedTapeExact). The loss's gradient and the gradients
// into GAT layers stay float32.

// mixed reports whether the model trains in mixed precision.
func (m *Model) mixed() bool { return m.prec == device.BF16 }

// KeepsOut reports whether, in mixed precision, layer l's output is kept
// in bfloat16 only in a pass that ends at layer last: a hidden GCN or
// SAGE layer (whose self term adds into each block of Z before the ReLU;
// GAT has its own tape) whose output the next layer, a GCN or SAGE
// layer, reads only through its dropout and its products (the
// aggregation, and a SAGE self term and its weight gradient, which read
// the same bfloat16 operand). A pass that ends at l keeps the output in
// float32 (Embeddings). perfmodel's memory and trace follow it.
func KeepsOut(specs []gcn.LayerSpec, l, last int, prec device.Precision) bool {
	if prec != device.BF16 || l >= last || l+1 >= len(specs) {
		return false
	}
	s, next := specs[l], specs[l+1]
	return s.Heads == 0 && s.Hidden && next.Heads == 0
}

// operand is an aggregation's dense operand: float32 (f), or bfloat16
// (b, isB) in mixed precision.
type operand struct {
	f   device.Mat
	b   device.MatBF16
	isB bool
	// raw: b is the bfloat16 features, not yet through the layer's
	// dropout (features_bf16.go).
	raw bool
}

func (o operand) cols() int {
	if o.isB {
		return o.b.Cols()
	}
	return o.f.Cols()
}

// spmm computes dst = a·o with float32 sums.
func (o operand) spmm(dev device.Device, dst device.Mat, a *device.CSR) {
	if o.isB {
		dev.SpMMBF16(dst, a, o.b)
		return
	}
	dev.SpMM(dst, a, o.f)
}

// stageOperand is the reused receive buffer of stage s at width w, in
// bfloat16 when b.
func (m *Model) stageOperand(s, rows, w int, b bool) operand {
	if !b {
		return operand{f: m.stageBuf(s, rows, w)}
	}
	buf := reused(m, m.stageB, [2]int{s, w}, rows, w)
	return operand{b: device.MatrixBF16(buf, rows, w), isB: true}
}

// reused returns the first rows·cols elements of the buffer cache holds
// under k, allocated for max(rows, rowsCap) rows on first use or when it
// is too small, as buf's: the rule of the bfloat16 and mask buffers.
func reused[K comparable, T device.Elem](m *Model, cache map[K]device.Buffer[T], k K, rows, cols int) device.Buffer[T] {
	b, ok := cache[k]
	if !ok || b.Len() < rows*cols {
		b = device.Alloc[T](m.dev, max(rows, m.rowsCap)*cols)
		cache[k] = b
	}
	return b.Slice(0, rows*cols)
}

// bufBF16 is buf for a bfloat16 buffer.
func (m *Model) bufBF16(name string, layer, rows, cols int) device.MatBF16 {
	return device.MatrixBF16(reused(m, m.wsB, wsKey{name, layer}, rows, cols), rows, cols)
}

// bufWords is buf for mask words: rows of wpr words.
func (m *Model) bufWords(name string, layer, rows, wpr int) device.Buffer[uint64] {
	return reused(m, m.wsU, wsKey{name, layer}, rows, wpr)
}

// scratch is the float32 scratch, shared by every product of width w,
// through which a bfloat16 result is computed a block of rows at a time.
func (m *Model) scratch(rows, w int) device.Mat {
	r := ScratchRows(max(rows, m.rowsCap), w)
	return m.bufCap("scratch", w, r, w, r)
}

// ScratchRows is the rows of that scratch for products of up to rows
// rows at width w: ScratchElems elements, at least one row, at most
// rows (perfmodel's CAGNETMemory counts it).
func ScratchRows(rows, w int) int { return max(1, min(rows, ScratchElems/max(w, 1))) }

// ScratchElems bounds that scratch: 4 MiB of float32 (8,192 rows at width
// 128), as gcn's. A variable so that tests cut small matrices into many
// blocks.
var ScratchElems = 1 << 20

// layerMixed is Forward's GCN or SAGE layer l in mixed precision. in is
// its input: float32 (x, or a GAT or SAGE layer's output), which training
// drops here, or the previous layer's bfloat16 output, already dropped.
func (m *Model) layerMixed(l int, s gcn.LayerSpec, in operand, training bool, last int) error {
	rows := m.hi - m.lo
	h := in.f
	switch {
	case in.raw:
		// The bfloat16 features (features_bf16.go).
		in = operand{b: m.featuresOperand(l, s, training), isB: true}
	case !in.isB:
		// Rounded once, dropped on the way in training (no float32
		// copy): one buffer per width, or per layer for SAGE, whose self
		// term's weight gradient reads it in the backward pass.
		hb := m.bufBF16("in.b", s.In, rows, s.In)
		if s.Self {
			hb = m.bufBF16("self.in", l, rows, s.In)
		}
		if training && m.cfg.Dropout > 0 {
			m.dropBlocks(l, hb, in)
		} else {
			m.dev.PackMatBF16(hb, h)
		}
		in = operand{b: hb, isB: true}
	}
	var self *Param // SAGE: W_self, and the input its term reads
	if m.self[l] >= 0 {
		self, m.inb[l] = m.Params[m.self[l]], in.b
	}
	ahb := m.bufBF16("ah", l, rows, s.In)
	if m.col.Size() == 1 && m.row.Size() == 1 {
		// One rank: one stage, its own block row, no partial sums: each
		// sum rounded once as the SpMM writes it.
		m.dev.SpMMBF16ToBF16(ahb, m.a[0], in.b)
	} else {
		acc := m.buf("ah.sum", s.In, rows, s.In)
		if err := m.aggregate(acc, m.a, in); err != nil {
			return err
		}
		m.dev.PackMatBF16(ahb, acc)
	}
	w := m.Params[m.w[l]]
	m.in, m.ah, m.ahb = append(m.in, h), append(m.ah, device.Mat{}), append(m.ahb, ahb)
	if KeepsOut(m.specs, l, last, m.prec) {
		zb := m.bufBF16("z", l, rows, s.Out)
		wpr := spmm.MaskWords(s.Out)
		pos := m.bufWords("pos", l, rows, wpr)
		drop := device.Dropout{Seed: m.cfg.Seed, Step: m.t, Site: l + 1, P: m.cfg.Dropout, Verts: m.verts}
		var keep device.Buffer[uint64]
		if training && drop.P > 0 {
			keep = m.bufWords("keep", l, rows, wpr)
		}
		device.GemmBF16ToBF16(m.dev, spmm.NoTrans, 1, ahb, w.db, zb, m.scratch(rows, s.Out), func(r0, r1 int, blk device.Mat) {
			if self != nil {
				// + the block's rows of the self term (a row's sums do
				// not depend on the block).
				m.dev.GemmBF16(spmm.NoTrans, spmm.NoTrans, 1, in.b.Slice(r0, r1, 0, s.In), self.db, 1, blk)
			}
			m.dev.ReLURecord(blk, blk, pos.Slice(r0*wpr, r1*wpr))
			if keep.Len() > 0 {
				d := drop
				d.Verts = drop.Verts.Slice(r0, r1)
				m.dev.DropoutRecord(blk, blk, keep.Slice(r0*wpr, r1*wpr), d)
			}
		})
		m.z, m.act = append(m.z, device.Mat{}), append(m.act, device.Mat{})
		m.zb, m.zbOK, m.pos, m.keep = append(m.zb, zb), append(m.zbOK, true), append(m.pos, pos), append(m.keep, keep)
		return nil
	}
	z := m.buf("z", l, rows, s.Out)
	m.dev.GemmBF16(spmm.NoTrans, spmm.NoTrans, 1, ahb, w.db, 0, z)
	if self != nil {
		m.dev.GemmBF16(spmm.NoTrans, spmm.NoTrans, 1, in.b, self.db, 1, z)
	}
	if s.Hidden {
		m.dev.ReLU(z, z) // in place, as Forward's float32 layer
	}
	m.z, m.act = append(m.z, z), append(m.act, z)
	m.appendUnkept()
	return nil
}

// dropBlocks puts in, layer l's input (float32, or bfloat16 widened),
// through the layer's dropout into the bfloat16 out, a block of rows at a
// time through the scratch: no float32 copy of the input.
func (m *Model) dropBlocks(l int, out device.MatBF16, in operand) {
	rows, w := out.Rows(), out.Cols()
	drop := device.Dropout{Seed: m.cfg.Seed, Step: m.t, Site: l, P: m.cfg.Dropout, Verts: m.verts}
	scr := m.scratch(rows, w)
	for r0 := 0; r0 < rows; r0 += scr.Rows() {
		r1 := min(r0+scr.Rows(), rows)
		blk, d := scr.Slice(0, r1-r0, 0, w), drop
		d.Verts = drop.Verts.Slice(r0, r1)
		src := blk
		if in.isB {
			m.dev.UnpackMatBF16(blk, in.b.Slice(r0, r1, 0, w))
		} else {
			src = in.f.Slice(r0, r1, 0, w)
		}
		m.dev.Dropout(blk, src, d)
		m.dev.PackMatBF16(out.Slice(r0, r1, 0, w), blk)
	}
}

// appendUnkept records in the tape that the current layer's output is not
// kept in bfloat16.
func (m *Model) appendUnkept() {
	m.zb, m.zbOK = append(m.zb, device.MatBF16{}), append(m.zbOK, false)
	m.pos, m.keep = append(m.pos, device.Buffer[uint64]{}), append(m.keep, device.Buffer[uint64]{})
}

// backwardMixed is LossAndGrad's GCN or SAGE layer l in mixed precision.
// From the gradient of its output, float32 (which it rectifies in place),
// or already rectified and rounded (dz.b, from the layer after it), it
// sets the layer's weight gradients and returns the gradient of its input
// after the layer's dropout: when the previous layer kept its output in
// bfloat16, rectified by that layer's ReLU and rounded (the bits its own
// pass would round them to), else float32; an empty operand when the
// layer needs none. On one rank the SpMM masks and rounds each float32
// sum as it writes it (device.SpMMBF16ToBF16Masked): the input gradient
// never exists in float32.
func (m *Model) backwardMixed(l int, s gcn.LayerSpec, dz operand) (operand, error) {
	rows, p := m.hi-m.lo, m.Params[m.w[l]]
	dzb := dz.b
	if !dz.isB {
		if s.Hidden {
			if m.zbOK[l] {
				m.dev.ReLUBackwardBits(dz.f, dz.f, m.pos[l])
			} else {
				m.dev.ReLUBackward(dz.f, dz.f, m.z[l])
			}
		}
		dzb = m.bufBF16("dz.b", s.Out, rows, s.Out)
		m.dev.PackMatBF16(dzb, dz.f)
	}
	m.dev.GemmBF16(spmm.Trans, spmm.NoTrans, 1, m.ahb[l], dzb, 0, p.dg)
	if err := m.reduceGrad(p); err != nil {
		return operand{}, err
	}
	var self *Param // SAGE: W_self's gradient reads the layer's bfloat16 input
	if m.self[l] >= 0 {
		self = m.Params[m.self[l]]
		m.dev.GemmBF16(spmm.Trans, spmm.NoTrans, 1, m.inb[l], dzb, 0, self.dg)
		if err := m.reduceGrad(self); err != nil {
			return operand{}, err
		}
	}
	if !s.NeedInputGrad {
		return operand{}, nil
	}
	// dZ·Wᵀ, rounded once as the aggregation's operand: one per width, as
	// the float32 pass's gw.
	gwb := m.bufBF16("gw", s.In, rows, s.In)
	device.GemmBF16ToBF16(m.dev, spmm.Trans, 1, dzb, p.db, gwb, m.scratch(rows, s.In), nil)
	if l > 0 && m.zbOK[l-1] {
		// Layer l-1 reads only its rounded, rectified output gradient;
		// dz.b of its width is dead here (this layer's dzb was read by
		// both products above).
		prev := m.bufBF16("dz.b", s.In, rows, s.In)
		pos, keep := m.pos[l-1], m.keep[l-1]
		if m.col.Size() == 1 && m.row.Size() == 1 && self == nil {
			if keep.Len() > 0 {
				m.dev.SpMMBF16ToBF16Masked(prev, m.at[0], gwb, keep, pos, m.cfg.Dropout)
			} else {
				m.dev.SpMMBF16ToBF16(prev, m.at[0], gwb)
				m.dev.ReLUBackwardBitsBF16(prev, prev, pos)
			}
			return operand{b: prev, isB: true}, nil
		}
		// Summed in float32 (over the stages and the process row, and
		// for SAGE with dS = dZ·W_selfᵀ), then masked and rounded.
		din := m.buf("din.sum", s.In, rows, s.In)
		if err := m.aggregate(din, m.at, operand{b: gwb, isB: true}); err != nil {
			return operand{}, err
		}
		if self != nil {
			m.dev.GemmBF16(spmm.NoTrans, spmm.Trans, 1, dzb, self.db, 1, din)
		}
		if keep.Len() > 0 {
			m.dev.ApplyMask(din, din, keep, m.cfg.Dropout)
		}
		m.dev.ReLUBackwardBits(din, din, pos)
		m.dev.PackMatBF16(prev, din)
		return operand{b: prev, isB: true}, nil
	}
	din := m.buf(dzNames[l&1], s.In, rows, s.In)
	if err := m.aggregate(din, m.at, operand{b: gwb, isB: true}); err != nil {
		return operand{}, err
	}
	if self != nil {
		m.dev.GemmBF16(spmm.NoTrans, spmm.Trans, 1, dzb, self.db, 1, din)
	}
	return operand{f: m.dropout(din, din, l)}, nil // in place: din is the pass's own
}
