package gcn

import (
	"scalegnn/device"
	"scalegnn/grid"
)

// The arena plan: what one pass takes from its arena, walked from the
// local block shapes without a device, and the arena's growth rule. The
// performance model predicts a rank's memory with it, and the tests hold
// it to the arenas of real models (ArenaBytes), so that a change to what
// forward, backward, loss or accuracy take from the arena must change the
// plan too.

// BlockShape is what the plan needs to know of one rank's blocks.
type BlockShape interface {
	// Rows is this rank's rows of the pass's vertices in vertex order
	// `order` split over axis a.
	Rows(a grid.Axis, order int) int
	// Cols is this rank's block of a width w split over axis a.
	Cols(w int, a grid.Axis) int
	// Size is the grid's size along axis a (a group of one runs no
	// collective, and so takes no bfloat16 staging).
	Size(a grid.Axis) int
}

// ArenaUse counts an arena's elements by pool: float32 (activations,
// gradients, temporaries), uint64 (dropout masks), uint16 (bfloat16
// staging) and int64 (argmax).
type ArenaUse struct{ F32, U64, U16, I64 int64 }

// Bytes is the memory the elements take.
func (u ArenaUse) Bytes() int64 { return 4*u.F32 + 8*u.U64 + 2*u.U16 + 8*u.I64 }

// After returns the capacity of an arena that held u once a pass has
// taken pass from it: a pool that the pass overflowed is replaced, at the
// next pass's start, by one of everything the pass took plus a quarter
// (pool.reset).
func (u ArenaUse) After(pass ArenaUse) ArenaUse {
	grow := func(c, need int64) int64 {
		if need > c {
			return need + need/4
		}
		return c
	}
	return ArenaUse{grow(u.F32, pass.F32), grow(u.U64, pass.U64), grow(u.U16, pass.U16), grow(u.I64, pass.I64)}
}

// Most returns the larger of u and v in each pool: an arena that holds
// either pass.
func (u ArenaUse) Most(v ArenaUse) ArenaUse {
	return ArenaUse{max(u.F32, v.F32), max(u.U64, v.U64), max(u.U16, v.U16), max(u.I64, v.I64)}
}

// ArenaStep returns what a training step (forward with dropout, loss,
// backward) of the model c takes from its arena on blocks s.
func (c Config) ArenaStep(s BlockShape, run Options) ArenaUse { return c.planStep(s, run).use }

// ArenaEval returns what an evaluation (forward without dropout, then the
// accuracy and the validation loss) takes from the arena on blocks s.
func (c Config) ArenaEval(s BlockShape, run Options) ArenaUse { return c.planEval(s, run).use }

// planStep walks a training step: forward with dropout, loss, backward.
func (c Config) planStep(s BlockShape, run Options) arenaPlan {
	p := arenaPlan{cfg: c, s: s, run: run, training: true}
	p.forward()
	p.loss()
	p.backward()
	return p
}

// planEval walks an evaluation: forward without dropout, the accuracy
// and the validation loss (the training loss's takes).
func (c Config) planEval(s BlockShape, run Options) arenaPlan {
	p := arenaPlan{cfg: c, s: s, run: run}
	p.forward()
	p.accuracy()
	p.loss()
	return p
}

// Staging is what mixed precision (device.BF16Products) stages of a
// pass's products, in bfloat16 elements: A the largest first operand of
// a GEMM, B the largest second operand of a GEMM or dense operand of an
// SpMM. The device's two staging buffers grow to the largest of each
// over every pass it runs (After) and stay.
type Staging struct{ A, B int64 }

// After is the staging once a pass needing pass has run on top of s.
func (s Staging) After(pass Staging) Staging {
	return Staging{max(s.A, pass.A), max(s.B, pass.B)}
}

// Bytes is the memory the staging takes (device.StagingBytes).
func (s Staging) Bytes() int64 { return 2 * (s.A + s.B) }

// StagingStep returns the mixed-precision staging a training step of the
// model c needs on blocks s.
func (c Config) StagingStep(s BlockShape, run Options) Staging { return c.planStep(s, run).stage }

// StagingEval returns the mixed-precision staging an evaluation needs on
// blocks s: the forward pass's products.
func (c Config) StagingEval(s BlockShape, run Options) Staging { return c.planEval(s, run).stage }

// arenaPlan mirrors, call for call, the arena.mat, arena.vec and pool
// takes of forward.go, dropout.go, comm.go, loss.go and backward.go, and
// the operands of their products (stage).
type arenaPlan struct {
	cfg      Config
	s        BlockShape
	run      Options
	training bool
	use      ArenaUse
	stage    Staging
	scratch  int64 // the pass's scratch so far (scratchFor)
	df       int64 // the pass's dF̃ buffer so far (dfFor)
	// actB[l]: layer l kept its output in bfloat16 only (actBF16); dzbIn[l]:
	// its dZ came back in it (dfInActBF16).
	actB, dzbIn []bool
}

// spmmOp is an SpMM whose dense operand is rows×cols.
func (p *arenaPlan) spmmOp(rows, cols int) {
	p.stage.B = max(p.stage.B, int64(rows)*int64(cols))
}

// gemmOp is a GEMM of an ar×ac and a br×bc operand (as stored).
func (p *arenaPlan) gemmOp(ar, ac, br, bc int) {
	p.stage = p.stage.After(Staging{int64(ar) * int64(ac), int64(br) * int64(bc)})
}

func (p *arenaPlan) dropout() bool { return p.training && p.cfg.Dropout > 0 }

// mixed is the model's mixed-precision layers (mixed.go).
func (p *arenaPlan) mixed() bool { return p.run.Precision == device.BF16 }

// selfInInput is reuse.go's rule on the plan's grid.
func (p *arenaPlan) selfInInput() bool {
	return selfInInput(p.s.Size(grid.X)*p.s.Size(grid.Y)*p.s.Size(grid.Z), p.run.SingleOrder)
}

// pmm is pmmAllReduce's (and startAllReduce's) bfloat16 staging.
func (p *arenaPlan) pmm(a grid.Axis, elems int) {
	if p.run.BF16 && p.s.Size(a) > 1 {
		p.use.U16 += int64(elems)
	}
}

func (p *arenaPlan) mat(rows, cols int) { p.use.F32 += int64(rows) * int64(cols) }

// keep is dropoutKeep: the masked copy and its mask bits.
func (p *arenaPlan) keep(rows, cols int) {
	if p.dropout() {
		p.mat(rows, cols)
		p.use.U64 += int64(rows) * int64((cols+63)/64)
	}
}

func (p *arenaPlan) layer(l int) (sp layerSpec, nP, nR, dIn, dOut int, pa, qa, ra grid.Axis) {
	sp = p.cfg.layers()[l]
	pa, qa, ra = grid.Rotation(l)
	nP, nR = p.s.Rows(pa, grid.InputOrder(l)), p.s.Rows(ra, grid.OutputOrder(l))
	dIn, dOut = p.s.Cols(sp.in, qa), p.s.Cols(sp.out, pa)
	return
}

func (p *arenaPlan) head() (rows, in, out int, pa, qa, ra grid.Axis) {
	pa, qa, ra = grid.Rotation(p.cfg.Layers)
	rows = p.s.Rows(pa, grid.OutputOrder(p.cfg.Layers-1))
	specs := p.cfg.layers()
	return rows, p.s.Cols(specs[len(specs)-1].out, qa), p.s.Cols(p.cfg.Classes, ra), pa, qa, ra
}

func (p *arenaPlan) forward() {
	c := p.cfg
	if c.InputProjection {
		rows, cols := p.s.Rows(grid.X, 1), p.s.Cols(c.Hidden, grid.Y)
		fz := p.s.Cols(c.Features, grid.Z)
		if p.run.FeaturesBF16 {
			p.use.U16 += int64(fz) * int64(cols) // W rounded; the features are bfloat16
		} else {
			p.gemmOp(rows, fz, fz, cols) // features · W
		}
		p.mat(rows, cols)
		p.pmm(grid.Z, rows*cols)
	}
	p.actB, p.dzbIn = make([]bool, c.Layers), make([]bool, c.Layers)
	prevB := int64(0) // layer l-1's bfloat16 output, elements
	for l := range c.Layers {
		sp, nP, nR, dIn, dOut, pa, qa, _ := p.layer(l)
		direct := false
		switch {
		case prevB > 0: // the previous layer's bfloat16 output (reuse.go's actBF16)
			direct = true
		case l == 0 && p.run.FeaturesBF16 && !c.InputProjection: // features_bf16.go
			direct = input0Direct(sp, p.dropout(), p.selfInInput())
			if input0DropBF16(sp, p.dropout(), p.selfInInput()) {
				// dropFeaturesBF16: the dropped copy, through the scratch.
				p.use.U16 += int64(nP) * int64(dIn)
				p.scratchFor(nP, dIn)
				direct = true
			} else if !direct {
				p.mat(nP, dIn) // widened
				if p.dropout() && !widenDropsInPlace(sp, true) {
					p.mat(nP, dIn)
				}
			}
		case sp.needInputGrad:
			p.keep(nP, dIn)
		case p.dropout():
			p.mat(nP, dIn)
		}
		if sp.heads > 0 {
			p.gatForward(sp, nP, nR, dIn, dOut, pa, qa)
			continue
		}
		if p.mixed() {
			p.mixedAggregate(nP, nR, dIn, pa, direct) // mixed.go
		} else {
			p.spmmOp(nP, dIn) // Â·F̃
			p.mat(nR, dIn)    // H
			p.pmm(pa, nR*dIn)
		}
		if sp.self && !p.selfInInput() {
			p.mat(nR, dIn) // SAGE: the input redistributed to H's layout
		}
		if actBF16(c.layers(), l, c.Layers-1, p.run.Precision, p.s.Size(qa), p.selfInInput()) {
			// transformReLUBF16: the output, its positions and the next
			// layer's dropout mask, W rounded, the scratch; for SAGE
			// W_self and the input rounded (selfOperands).
			n := int64(nR) * int64(dOut)
			if !actbInPrev(sp, n, prevB) {
				p.use.U16 += n
			}
			if sp.self {
				p.use.U16 += int64(dIn) * int64(dOut)
				if !direct {
					p.use.U16 += int64(nR) * int64(dIn)
				}
			}
			p.use.U64 += int64(nR) * int64((dOut+63)/64)
			if p.dropout() {
				p.use.U64 += int64(nR) * int64((dOut+63)/64)
			}
			p.use.U16 += int64(dIn) * int64(dOut)
			p.scratchFor(nR, dOut)
			p.actB[l], prevB = true, n
			continue
		}
		nIn := nP * dIn
		if prevB > 0 {
			nIn = 0 // the input is bfloat16
		}
		prevB = 0
		hDead := 0 // mixedAggregate's float32 H
		if p.mixed() && p.s.Size(pa) > 1 {
			hDead = nR * dIn
		}
		if !zInInput(c.layers(), l, p.run.Precision, p.run.Overlap, p.s.Size(pa), dIn, dOut, nR, nIn) && !zInH(hDead, nR*dOut) {
			p.mat(nR, dOut) // Z, unless in its input's memory or H's float32 sum
		}
		switch {
		case p.mixed(): // W, and W_self with the SAGE input (unless bfloat16 already)
			p.use.U16 += int64(dIn) * int64(dOut)
			if sp.self {
				p.use.U16 += int64(dIn) * int64(dOut)
				if !direct {
					p.use.U16 += int64(nR) * int64(dIn)
				}
			}
		case sp.self:
			p.gemmOp(nR, dIn, dIn, dOut) // H·W
			p.gemmOp(nR, dIn, dIn, dOut) // F̃_R·W_self
		default:
			p.gemmOp(nR, dIn, dIn, dOut) // H·W
		}
		p.pmm(qa, nR*dOut)
		if !sp.hidden {
			continue
		}
		if sp.norm { // rmsNormReLU: sum of squares, rms, u
			p.use.F32 += 2 * int64(nR)
			p.mat(nR, dOut)
		} else { // ReLURecord's positions
			p.use.U64 += int64(nR) * int64((dOut+63)/64)
		}
		if sp.residual { // redistributed input, sum
			p.mat(nR, dOut)
			p.mat(nR, dOut)
		}
	}
	if c.OutputHead {
		rows, in, out, _, qa, _ := p.head()
		p.keep(rows, in)
		p.mat(rows, out)
		p.gemmOp(rows, in, in, out)
		p.pmm(qa, rows*out)
	}
}

// logits returns the rows and columns of the local logits block.
func (p *arenaPlan) logits() (rows, cols int) {
	ra, ca := logitsAxes(p.cfg)
	return p.s.Rows(ra, grid.OutputOrder(p.cfg.Layers-1)), p.s.Cols(p.cfg.Classes, ca)
}

func (p *arenaPlan) loss() {
	rows, cols := p.logits()
	p.use.F32 += int64(rows) + 2*int64(rows) // row max, sums
	p.mat(rows, cols)                        // ∂loss/∂logits
}

func (p *arenaPlan) accuracy() {
	rows, _ := p.logits()
	p.use.F32 += 2 * int64(rows) // best, max
	p.use.I64 += int64(rows)     // argmax
}

func (p *arenaPlan) backward() {
	c := p.cfg
	if c.OutputHead {
		rows, in, out, _, _, ra := p.head()
		p.mat(rows, in)               // dX
		p.gemmOp(rows, out, in, out)  // dOut·Wᵀ
		p.gemmOp(rows, in, rows, out) // Xᵀ·dOut
		p.pmm(ra, rows*in)
	}
	for l := c.Layers - 1; l >= 0; l-- {
		sp, nP, nR, dIn, dOut, pa, _, ra := p.layer(l)
		if sp.heads > 0 {
			p.gatBackward(sp, nP, nR, dIn, pa, ra)
			if !sp.needInputGrad {
				break
			}
			p.mat(nP, dIn)                                    // dF̃
			p.gemmOp(nP, sp.projWidth(), dIn, sp.projWidth()) // dY·Wᵀ
			continue
		}
		if sp.hidden {
			if sp.residual {
				p.mat(nR, dOut) // ReLU gradient beside the residual's
			}
			if sp.norm {
				p.use.F32 += int64(nR) // dot
			}
		}
		if p.mixed() {
			nextH := int64(0)
			if l+1 < c.Layers {
				_, _, nR1, dIn1, _, _, _, _ := p.layer(l + 1)
				nextH = int64(nR1) * int64(dIn1)
			}
			if !p.dzbIn[l] && !dzInNextH(c.layers(), l, p.run.Precision, int64(nR)*int64(dOut), nextH) {
				p.use.U16 += int64(nR) * int64(dOut) // dZ, once for all its products
			}
		} else {
			p.gemmOp(nR, dIn, nR, dOut) // Hᵀ·dZ
			if sp.self {
				p.gemmOp(nR, dIn, nR, dOut) // F̃_Rᵀ·dZ
			}
		}
		if !sp.needInputGrad {
			break
		}
		prevActB := l > 0 && p.actB[l-1]
		ru := reuse(c.layers(), l, p.run.Precision, p.run.Overlap, p.s.Size(pa), dIn, dOut, prevActB)
		dfb := false
		if prevActB {
			_, _, _, _, _, ppa, _, _ := p.layer(l - 1)
			dfb = dfInActBF16(c.layers(), l, p.s.Size(ra), p.s.Size(ppa))
		}
		dsAt := dsWhere(sp, p.s.Size(pa), p.selfInInput())
		dh := nR
		if dsAt == dsStacked {
			dh *= 2 // SAGE: dS stacked under dH
		}
		if dsAt == dsOwn {
			p.mat(nR, dIn) // dS
		}
		switch {
		case ru.dhbInH: // dH in bfloat16 in H, through a scratch
			p.scratchFor(nR, dIn)
		case !ru.dhInH && !ru.dhInDZ:
			p.mat(dh, dIn) // dH
		}
		if !p.mixed() {
			p.gemmOp(nR, dOut, dIn, dOut) // dZ·Wᵀ (and dZ·W_selfᵀ)
		}
		masked := dfb && p.dropout() // dfMaskedBF16
		if !ru.dhbInH {
			p.pmm(pa, dh*dIn)
			if masked {
				p.use.U16 += int64(nR) * int64(dIn) // dH rounded
			} else {
				p.spmmOp(nR, dIn) // Âᵀ·dH
			}
		}
		if dfb { // dF̃ in the previous layer's bfloat16 output
			if dsAt == dsInDF {
				p.dfFor(int64(nP) * int64(dIn)) // dfSelfBF16
			}
			p.dzbIn[l-1] = true
			continue
		}
		if !ru.dfInAct {
			p.mat(nP, dIn) // dF̃
		}
		p.pmm(ra, nP*dIn)
		if dsAt == dsStacked || dsAt == dsOwn {
			p.mat(nP, dIn) // dS redistributed back
		}
		if sp.residual {
			p.mat(nP, dIn) // the residual's gradient, redistributed
		}
	}
	if c.InputProjection {
		rows, fz, hy := p.s.Rows(grid.X, 1), p.s.Cols(c.Features, grid.Z), p.s.Cols(c.Hidden, grid.Y)
		if p.run.FeaturesBF16 {
			p.use.U16 += int64(rows) * int64(hy) // d rounded; the features are bfloat16
		} else {
			p.gemmOp(rows, fz, rows, hy) // Featuresᵀ·d
		}
	}
}

// gatForward mirrors gat.go's gatForward after the input's dropout.
func (p *arenaPlan) gatForward(sp layerSpec, nP, nR, dIn, dOut int, pa, qa grid.Axis) {
	cw, k := sp.projWidth(), int64(sp.heads)
	p.mat(nP, cw) // Y
	p.gemmOp(nP, dIn, dIn, cw)
	p.pmm(qa, nP*cw)
	p.use.F32 += 2*k*int64(nP) + 3*k*int64(nR) // t, s in rows P; s in rows R; max, sums
	p.mat(nR, cw)                              // O
	p.pmm(pa, nR*cw)
	p.use.F32 += int64(nR) // ones, to add the bias
	if !sp.hidden {
		p.mat(nR, sp.out) // the heads' mean
	}
	p.mat(nR, dOut) // this rank's columns
}

// gatBackward mirrors gat.go's gatBackward up to the input's gradient.
func (p *arenaPlan) gatBackward(sp layerSpec, nP, nR, dIn int, pa, ra grid.Axis) {
	cw, k := sp.projWidth(), int64(sp.heads)
	p.mat(nR, sp.out) // whole rows of the output's gradient
	p.pmm(pa, nR*sp.out)
	if !sp.hidden {
		p.mat(nR, cw) // through the mean
	}
	p.use.F32 += 2*k*int64(nR) + k*int64(nP) + int64(cw) // row dots, ds; dt and the bias's gradient
	p.mat(nP, cw)                                        // dY
	p.pmm(ra, nP*cw)
	p.use.F32 += k * int64(nP) // ds in rows P
	p.gemmOp(nP, dIn, nP, cw)  // F̃ᵀ·dY
}

// ArenaBytes returns the capacity in bytes of the model's full-graph
// arena and of its mini-batch arena, as the next pass on each will find
// it (a pass that overflowed has its growth applied).
func (m *Model) ArenaBytes() (full, batch int64) {
	return m.full.ar.capacity().Bytes(), m.batch.ar.capacity().Bytes()
}

// ArenaUse is ArenaBytes by pool, in elements.
func (m *Model) ArenaUse() (full, batch ArenaUse) {
	return m.full.ar.capacity(), m.batch.ar.capacity()
}

// arenaPlan is what forward reserves in b's arena before the first pass
// on it, so that the passes b will run leave no garbage, as perfmodel
// predicts: on the full graph, whose passes are the same from step to
// step, exactly what a training step or an evaluation takes, whichever
// is more in each pool (jobs evaluates at least after the last epoch),
// or an evaluation's alone (mini-batch training's full graph, predict);
// for a mini-batch, the first batch and the growth rule's quarter
// (ArenaUse.After), which later batches of about its size fit. Before
// (2026-11-28) the full graph's arena took the quarter too: a quarter of
// its largest pass unused in every step.
func (m *Model) arenaPlan(b *bound, training bool) ArenaUse {
	s := shardShape{m.g, b.sh}
	switch {
	case b != &m.full:
		return ArenaUse{}.After(m.Cfg.ArenaStep(s, m.Options))
	case training:
		return m.Cfg.ArenaStep(s, m.Options).Most(m.Cfg.ArenaEval(s, m.Options))
	default:
		return m.Cfg.ArenaEval(s, m.Options)
	}
}

// shardShape shows the arena plan the blocks of a model's shards.
type shardShape struct {
	g  *grid.Grid
	sh *Shards
}

var _ BlockShape = shardShape{}

func (s shardShape) Rows(a grid.Axis, order int) int {
	lo, hi := s.sh.rows(s.g, order, a)
	return hi - lo
}

func (s shardShape) Cols(w int, a grid.Axis) int {
	lo, hi := s.g.Range(w, a)
	return hi - lo
}

func (s shardShape) Size(a grid.Axis) int { return s.g.Comm(a).Size() }
