package perfmodel

import (
	"math"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
)

// gatEdgeArrays is how many per-edge arrays (nnz × K float32 each) a GAT
// layer keeps for a pass: the scores, overwritten by α; in training α
// with attention dropout (when the job drops) and dα.
func (j Job) gatEdgeArrays(training bool) int {
	if !training {
		return 1
	}
	if j.Dropout > 0 {
		return 3
	}
	return 2
}

// gatEdgeBytes is the bytes of the per-edge arrays of every GAT layer of
// a pass on the tracer's blocks: the shard block's nonzeros × K heads ×
// the arrays (gatEdgeArrays) × 4. They live per layer, beside the arena,
// because the backward pass reads the forward's α.
func (j Job) gatEdgeBytes(t *tracer, training bool) int64 {
	var b int64
	for l, sp := range j.layers() {
		if sp.heads == 0 {
			continue
		}
		p, _, r := grid.Rotation(l)
		b += 4 * int64(j.gatEdgeArrays(training)) * int64(sp.heads) * int64(math.Round(t.localNNZ(l, r, p)))
	}
	return b
}

// gatArenas is arenas for a GAT job: gcn's arena plan (gcn.ArenaStep)
// does not walk GAT layers yet, so gatPass walks them here from the
// layout of docs/architecture.md, with the plan's growth rule. Once
// package gcn's plan walks GAT layers (and TestArenaMatchesModel holds it
// to the model's arenas), arenas should call it for GAT too and this walk
// go.
func gatArenas(j Job, full *tracer, steps []*tracer) (fullArena, batchArena gcn.ArenaUse) {
	for _, step := range steps {
		if j.Mode == gcn.MiniBatch {
			batchArena = batchArena.After(gatPass(step, true))
		} else {
			fullArena = fullArena.After(gatPass(step, true))
		}
	}
	fullArena = fullArena.After(gatPass(full, false))
	return fullArena, batchArena
}

// gatPass is what one pass of a GAT model takes from its arena on the
// tracer's blocks: a training step (forward with dropout, loss,
// backward) or an evaluation (forward, accuracy). The input projection,
// the output head, the loss and the accuracy take what gcn's arena plan
// says they take.
func gatPass(t *tracer, training bool) gcn.ArenaUse {
	j := t.j
	var u gcn.ArenaUse
	bf16 := j.CommDType == collectives.BF16
	mat := func(rows, cols int) { u.F32 += int64(rows) * int64(cols) }
	pmm := func(a grid.Axis, elems int) {
		if bf16 && t.size(a) > 1 {
			u.U16 += int64(elems)
		}
	}
	dropout := training && j.Dropout > 0
	keep := func(rows, cols int) {
		if dropout {
			mat(rows, cols)
			u.U64 += int64(rows) * int64((cols+63)/64)
		}
	}
	specs := j.layers()
	if j.InputProjection {
		rows, cols := t.rowsOf(grid.X, 1), t.width(j.Hidden, grid.Y)
		mat(rows, cols)
		pmm(grid.Z, rows*cols)
	}
	for l, sp := range specs {
		p, q, r := grid.Rotation(l)
		nP, nR := t.rowsOf(p, grid.InputOrder(l)), t.rowsOf(r, grid.OutputOrder(l))
		dIn, dOut := t.width(sp.in, q), t.width(sp.out, p)
		c, k := sp.proj, sp.heads
		if sp.needInputGrad {
			keep(nP, dIn)
		} else if dropout {
			mat(nP, dIn)
		}
		mat(nP, c) // Y
		pmm(q, nP*c)
		mat(nP, 2*k) // s, t
		mat(nR, k)   // s in rows R
		mat(nR, 2*k) // row max, row sum
		mat(nR, c)   // O
		pmm(p, nR*c)
		if sp.hidden {
			mat(nR, c) // ELU(O)
		} else {
			mat(nR, sp.out) // the heads' mean
		}
		mat(nR, dOut) // the kept column block
	}
	if j.OutputHead {
		pa, qa, ra := grid.Rotation(j.Layers)
		rows, in, out := t.rowsOf(pa, grid.OutputOrder(j.Layers-1)), t.width(j.headIn(), qa), t.width(j.Classes, ra)
		keep(rows, in)
		mat(rows, out)
		pmm(qa, rows*out)
	}
	ra, ca := t.logitsAxes()
	rows := t.rowsOf(ra, grid.OutputOrder(j.Layers-1))
	if !training {
		u.F32 += 2 * int64(rows) // best, max
		u.I64 += int64(rows)     // argmax
		return u
	}
	u.F32 += 3 * int64(rows) // row max, sums
	mat(rows, t.width(j.Classes, ca))
	if j.OutputHead {
		pa, qa, ra := grid.Rotation(j.Layers)
		rows, in := t.rowsOf(pa, grid.OutputOrder(j.Layers-1)), t.width(j.headIn(), qa)
		mat(rows, in) // dX
		pmm(ra, rows*in)
		if dropout {
			mat(rows, in)
		}
	}
	for l := j.Layers - 1; l >= 0; l-- {
		sp := specs[l]
		p, q, r := grid.Rotation(l)
		nP, nR := t.rowsOf(p, grid.InputOrder(l)), t.rowsOf(r, grid.OutputOrder(l))
		dIn := t.width(sp.in, q)
		c, k := sp.proj, sp.heads
		mat(nR, sp.out) // dO widened
		pmm(p, nR*sp.out)
		mat(nR, c)   // through ELU or the mean
		mat(nR, 2*k) // row dot, ds
		mat(nP, 2*k) // dt, ds in rows P
		mat(nP, c)   // dY
		pmm(r, nP*c)
		if !sp.needInputGrad {
			break
		}
		mat(nP, dIn) // dF
		if dropout {
			mat(nP, dIn) // applyKeep
		}
	}
	return u
}
