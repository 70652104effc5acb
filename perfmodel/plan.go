package perfmodel

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
)

// Group names the communicator of a collective.
type Group int

const (
	GroupX Group = iota
	GroupY
	GroupZ
	// GroupCube is the 3D group of a replica (the residual's alltoallv).
	GroupCube
	// GroupDP is the data-parallel group (same x, y, z; differing d).
	GroupDP
)

func (g Group) String() string { return [...]string{"X", "Y", "Z", "cube", "DP", "row", "col"}[g] }

func groupOf(a grid.Axis) Group { return Group(a) }

// Phase is the part of training a collective or kernel belongs to.
type Phase int

const (
	PhaseForward Phase = iota
	PhaseLoss
	PhaseBackward
	PhaseDP
	PhaseEval
)

func (p Phase) String() string {
	return [...]string{"forward", "loss", "backward", "dp", "eval"}[p]
}

// Collective is one collective call of one rank.
type Collective struct {
	Phase Phase
	// Name says which tensor moves: proj, H, Z, norm, residual, head, loss.max,
	// loss.sums, loss.total, dW, dH, dF, norm.scale, norm.dot, head.dW,
	// head.dX, proj.dW, acc.max, acc.argmin, acc.hits, vloss.max, vloss.sums,
	// vloss.total, dp.<param>; a GAT
	// layer's Y, gat.s, gat.max, gat.sum, O, dO, gat.rowdot, gat.ds,
	// gat.dt, dY, dW (gat.go).
	Name string
	// Layer is the GCN layer, -1 for the dense layers, the loss and the
	// accuracy.
	Layer int
	Kind  collectives.Kind
	Group Group
	// Size is the number of ranks in the group.
	Size int
	// Elems is the number of elements this rank hands in (for alltoallv
	// the sum of its send counts, itself included), ElemBytes their size.
	Elems     int64
	ElemBytes int
	// SelfElems is the part of an alltoallv's Elems that stays on the rank.
	SelfElems int64
}

// Bytes returns the payload bytes, as collectives.Counters counts them.
func (c Collective) Bytes() int64 { return c.Elems * int64(c.ElemBytes) }

// KernelKind is the kind of a local kernel.
type KernelKind int

const (
	KernelSpMM KernelKind = iota
	KernelGEMM
	KernelElementwise
)

// Kernel is one local computation of one rank.
type Kernel struct {
	Phase Phase
	Kind  KernelKind
	Name  string
	Layer int
	// SpMM: dst (Rows × Width) = A (Rows × Inner, NNZ nonzeros) · B (Inner × Width).
	// GEMM: dst (M × N) = op(A) (M × K) · op(B) (K × N), op by TransA, TransB.
	// Elementwise: Elems elements.
	Rows, Inner, Width int
	NNZ                float64
	M, N, K            int
	TransA, TransB     bool
	Elems              float64
	// Heads marks a GAT layer's per-head aggregation and edge kernels
	// (SpMMHeads and its backward), which stay float32 in mixed precision.
	Heads bool
}

// Trace is what a rank does in one training step or one evaluation.
type Trace struct {
	Comm    []Collective
	Kernels []Kernel
}

// Coords is a rank's position in the grid.
type Coords struct{ D, X, Y, Z int }

func (c Coords) of(a grid.Axis) int {
	switch a {
	case grid.X:
		return c.X
	case grid.Y:
		return c.Y
	}
	return c.Z
}

// CoordsOf returns the coordinates of world rank r of shape s.
func CoordsOf(s grid.Shape, r int) Coords {
	d, x, y, z := s.Coords(r)
	return Coords{d, x, y, z}
}

// Local fixes how many rows a rank's blocks hold. The zero value is what a
// prediction uses: grid.Block of N in full-graph training, and in
// mini-batch training the expected share ceil(B/parts) of a uniform sample.
// A test that knows the sample passes the exact counts.
type Local struct {
	// Rows returns how many of the step's rows fall into block i when
	// their dimension, in vertex order `order` (0: p1, 1: p2 of double
	// permutation; both the same otherwise), is split into parts blocks.
	Rows func(order, parts, i int) int
	// ResidualRows returns how many rows of the P-block pi (of pParts) of
	// layer l's input order land in the R-block ri (of rParts) of its
	// output order: the rows a rank sends in the residual's
	// redistribution. nil: the exact overlap of the two blocks when input
	// and output share one vertex order (no or single permutation), its
	// expectation nP·nR/n with double permutation.
	ResidualRows func(l, pParts, pi, rParts, ri int) int
}

// blockLen is the length of block i of n split into parts.
func blockLen(n, parts, i int) int {
	lo, hi := grid.Block(n, parts, i)
	return hi - lo
}

func overlap(n, pa, pi, pb, pj int) int {
	a0, a1 := grid.Block(n, pa, pi)
	b0, b1 := grid.Block(n, pb, pj)
	return max(0, min(a1, b1)-max(a0, b0))
}

// tracer walks the model as package gcn runs it and records what one rank
// sends and computes.
type tracer struct {
	j        Job
	s        grid.Shape
	at       Coords
	n        int     // rows of the pass (N, or B in a mini-batch step)
	nnz      float64 // nonzeros of the pass's adjacency
	rows     func(order, parts, i int) int
	resRows  func(l, pParts, pi, rParts, ri int) int
	pmmBytes int
	phase    Phase
	tr       Trace
}

func newTracer(j Job, s grid.Shape, at Coords, loc Local, training bool) *tracer {
	t := &tracer{j: j, s: s, at: at, n: j.N, nnz: j.adjNNZ(), pmmBytes: j.CommDType.Bytes()}
	mini := training && j.Mode == gcn.MiniBatch
	if mini {
		t.n, t.nnz = j.BatchSize, j.stepNNZ()
	}
	n, perm := t.n, j.Permutation == permute.Double
	switch {
	case loc.Rows != nil:
		t.rows = loc.Rows
	case mini:
		t.rows = func(_, parts, i int) int { return min(n, (n+parts-1)/parts) }
	default:
		t.rows = func(_, parts, i int) int { return blockLen(n, parts, i) }
	}
	t.resRows = loc.ResidualRows
	if t.resRows == nil {
		rows := t.rows
		t.resRows = func(l, pp, pi, rp, ri int) int {
			if perm || mini {
				return int(math.Round(float64(rows(grid.InputOrder(l), pp, pi)) * float64(rows(grid.OutputOrder(l), rp, ri)) / float64(n)))
			}
			return overlap(n, pp, pi, rp, ri)
		}
	}
	return t
}

func (t *tracer) size(a grid.Axis) int { return t.s.Size(a) }

// rowsOf returns this rank's rows of a dimension in vertex order `order`
// split over axis a.
func (t *tracer) rowsOf(a grid.Axis, order int) int { return t.rows(order, t.size(a), t.at.of(a)) }

// width returns this rank's block of a width w split over axis a.
func (t *tracer) width(w int, a grid.Axis) int { return blockLen(w, t.size(a), t.at.of(a)) }

// allReduce records an all-reduce over axis a unless its group is one rank
// (the model issues no call then).
func (t *tracer) allReduce(name string, layer int, a grid.Axis, elems, elemBytes int) {
	t.allReduceGroup(name, layer, groupOf(a), t.size(a), elems, elemBytes)
}

func (t *tracer) allReduceGroup(name string, layer int, g Group, size, elems, elemBytes int) {
	if size == 1 {
		return
	}
	t.tr.Comm = append(t.tr.Comm, Collective{Phase: t.phase, Name: name, Layer: layer, Kind: collectives.KindAllReduce,
		Group: g, Size: size, Elems: int64(elems), ElemBytes: elemBytes})
}

func (t *tracer) gemm(name string, layer int, ta, tb bool, m, n, k int) {
	t.tr.Kernels = append(t.tr.Kernels, Kernel{Phase: t.phase, Kind: KernelGEMM, Name: name, Layer: layer, M: m, N: n, K: k, TransA: ta, TransB: tb})
}

func (t *tracer) spmm(name string, layer, rows, inner, width int, nnz float64) {
	t.tr.Kernels = append(t.tr.Kernels, Kernel{Phase: t.phase, Kind: KernelSpMM, Name: name, Layer: layer, Rows: rows, Inner: inner, Width: width, NNZ: nnz})
}

// spmmHeads is spmm for a GAT layer's per-head kernels (Kernel.Heads).
func (t *tracer) spmmHeads(name string, layer, rows, inner, width int, nnz float64) {
	t.spmm(name, layer, rows, inner, width, nnz)
	t.tr.Kernels[len(t.tr.Kernels)-1].Heads = true
}

func (t *tracer) elementwise(name string, layer int, elems float64) {
	if elems <= 0 {
		return
	}
	t.tr.Kernels = append(t.tr.Kernels, Kernel{Phase: t.phase, Kind: KernelElementwise, Name: name, Layer: layer, Elems: elems})
}

// localNNZ is the expected nonzeros of this rank's block of layer l's
// adjacency shard (rows split over r, columns over p), the largest block's
// share when the job says how unbalanced the blocks are.
func (t *tracer) localNNZ(l int, r, p grid.Axis) float64 {
	nr, np := float64(t.rowsOf(r, grid.OutputOrder(l))), float64(t.rowsOf(p, grid.InputOrder(l)))
	n := float64(t.n)
	return t.nnz * (nr / n) * (np / n) * t.j.imbalance()
}

// logitsAxes returns the axes of the logits' rows and classes.
func (t *tracer) logitsAxes() (rows, cols grid.Axis) {
	if t.j.OutputHead {
		p, _, r := grid.Rotation(t.j.Layers)
		return p, r
	}
	p, _, r := grid.Rotation(t.j.Layers - 1)
	return r, p
}

// forward records the forward pass (gcn/forward.go).
func (t *tracer) forward(training bool) {
	j := t.j
	dropout := training && j.Dropout > 0
	if j.InputProjection {
		rows, in, out := t.rowsOf(grid.X, 1), t.width(j.Features, grid.Z), t.width(j.Hidden, grid.Y)
		t.gemm("proj", -1, false, false, rows, out, in)
		t.allReduce("proj", -1, grid.Z, rows*out, t.pmmBytes)
	}
	for l, sp := range j.layers() {
		if sp.heads > 0 {
			t.gatForward(l, sp, training)
			continue
		}
		p, q, r := grid.Rotation(l)
		nP, nR := t.rowsOf(p, grid.InputOrder(l)), t.rowsOf(r, grid.OutputOrder(l))
		dIn, dOut := t.width(sp.in, q), t.width(sp.out, p)
		if dropout {
			t.elementwise("dropout", l, 2*float64(nP*dIn))
		}
		t.spmm("A·F", l, nR, nP, dIn, t.localNNZ(l, r, p))
		t.allReduce("H", l, p, nR*dIn, t.pmmBytes)
		t.gemm("H·W", l, false, false, nR, dOut, dIn)
		if sp.self {
			t.selfTerm(l, sp, false)
			t.gemm("S·Wself", l, false, false, nR, dOut, dIn)
		}
		t.allReduce("Z", l, q, nR*dOut, t.pmmBytes)
		if !sp.hidden {
			continue
		}
		if sp.norm {
			// SumSquares reads Z; RMSNormApply, fused with the ReLU,
			// reads Z and writes u and the output.
			t.elementwise("norm", l, 4*float64(nR*dOut))
			t.allReduce("norm", l, p, nR, 4)
		} else {
			t.elementwise("relu", l, 2*float64(nR*dOut)) // in place
		}
		if sp.residual {
			t.residual(l, sp, false)
			t.elementwise("residual", l, 3*float64(nR*dOut)) // Add
		}
	}
	if j.OutputHead {
		pa, qa, ra := grid.Rotation(j.Layers)
		rows, in, out := t.rowsOf(pa, grid.OutputOrder(j.Layers-1)), t.width(j.headIn(), qa), t.width(j.Classes, ra)
		if dropout {
			t.elementwise("head.dropout", -1, 2*float64(rows*in))
		}
		t.gemm("head", -1, false, false, rows, out, in)
		t.allReduce("head", -1, qa, rows*out, t.pmmBytes)
	}
}

// residual records the alltoallv of grid.Redistribute for layer l: the
// input (rows P, cols Q) to the output layout (rows R, cols P) forward,
// back the other way in the backward pass.
//
// Where one rank holds the whole replica, gcn permutes the rows on the
// device instead (a gather pass, no collective).
func (t *tracer) residual(l int, sp layerSpec, backward bool) {
	p, q, r := grid.Rotation(l)
	if t.s.X*t.s.Y*t.s.Z == 1 {
		t.elementwise("residual.permute", l, 2*float64(t.rowsOf(r, grid.OutputOrder(l))*sp.out)) // GatherRows
		return
	}
	var elems, self int
	if !backward {
		// Targets share my R coordinate; each gets the rows of my P-block
		// that land in my R-block, times its share of my Q-block of
		// columns; every Q coordinate receives a copy.
		rows := t.resRows(l, t.size(p), t.at.of(p), t.size(r), t.at.of(r))
		elems = rows * t.width(sp.in, q) * t.size(q)
		self = rows * overlapWidth(sp.in, t.size(q), t.at.of(q), t.size(p), t.at.of(p))
	} else {
		// Targets share my Q coordinate; my rows all go out, with the
		// columns where my P-block of the output meets my Q-block of the
		// input; every R coordinate receives a copy.
		cols := overlapWidth(sp.out, t.size(p), t.at.of(p), t.size(q), t.at.of(q))
		elems = t.rowsOf(r, grid.OutputOrder(l)) * cols * t.size(r)
		self = t.resRows(l, t.size(p), t.at.of(p), t.size(r), t.at.of(r)) * cols
	}
	t.tr.Comm = append(t.tr.Comm, Collective{Phase: t.phase, Name: "residual", Layer: l, Kind: collectives.KindAlltoallv,
		Group: GroupCube, Size: t.s.X * t.s.Y * t.s.Z, Elems: int64(elems), ElemBytes: 4, SelfElems: int64(self)})
}

// selfTerm records the redistribution of a SAGE layer's input (after
// dropout) from its layout (rows P, cols Q) to the aggregation's (rows R
// of the output order, cols Q) forward, and of its gradient back in the
// backward pass: the residual's alltoallv with the columns staying on Q.
// Forward, my targets share my R and Q coordinates and each gets the
// rows of my P-block that land in my R-block, all my columns; every P
// coordinate receives a copy (itself included). Backward, mirrored: my
// targets share my P and Q coordinates, every R coordinate receives the
// same rows. One rank holding the replica gathers rows on the device.
func (t *tracer) selfTerm(l int, sp layerSpec, backward bool) {
	p, q, r := grid.Rotation(l)
	if t.s.X*t.s.Y*t.s.Z == 1 {
		t.elementwise("self.permute", l, 2*float64(t.rowsOf(r, grid.OutputOrder(l))*sp.in)) // GatherRows
		return
	}
	rows := t.resRows(l, t.size(p), t.at.of(p), t.size(r), t.at.of(r))
	self := rows * t.width(sp.in, q)
	copies := t.size(p)
	if backward {
		copies = t.size(r)
	}
	t.tr.Comm = append(t.tr.Comm, Collective{Phase: t.phase, Name: "self", Layer: l, Kind: collectives.KindAlltoallv,
		Group: GroupCube, Size: t.s.X * t.s.Y * t.s.Z, Elems: int64(self * copies), ElemBytes: 4, SelfElems: int64(self)})
}

func overlapWidth(w, pa, pi, pb, pj int) int { return overlap(w, pa, pi, pb, pj) }

// loss records the softmax cross-entropy (gcn/loss.go).
func (t *tracer) loss() {
	ra, ca := t.logitsAxes()
	rows, w := t.rowsOf(ra, grid.OutputOrder(t.j.Layers-1)), t.width(t.j.Classes, ca)
	// RowMax and SoftmaxSums read the logits, SoftmaxGrad reads them and
	// writes the gradient, Scale reads and writes it.
	t.elementwise("loss", -1, 6*float64(rows*w))
	t.allReduce("loss.max", -1, ca, rows, 4)
	t.allReduce("loss.sums", -1, ca, 2*rows, 4)
	t.allReduce("loss.total", -1, ra, 2, 8)
}

// valLoss records evaluation's validation loss (gcn/loss.go's valLoss):
// the training loss's calls over the validation mask, without the Scale.
func (t *tracer) valLoss() {
	ra, ca := t.logitsAxes()
	rows, w := t.rowsOf(ra, grid.OutputOrder(t.j.Layers-1)), t.width(t.j.Classes, ca)
	t.elementwise("val_loss", -1, 4*float64(rows*w))
	t.allReduce("vloss.max", -1, ca, rows, 4)
	t.allReduce("vloss.sums", -1, ca, 2*rows, 4)
	t.allReduce("vloss.total", -1, ra, 2, 8)
}

// accuracy records the distributed argmax and hit counts.
func (t *tracer) accuracy() {
	ra, ca := t.logitsAxes()
	rows, w := t.rowsOf(ra, grid.OutputOrder(t.j.Layers-1)), t.width(t.j.Classes, ca)
	t.elementwise("accuracy", -1, float64(rows*w))
	t.allReduce("acc.max", -1, ca, rows, 4)
	t.allReduce("acc.argmin", -1, ca, rows, 8)
	t.allReduce("acc.hits", -1, ra, 6, 8)
}

// backward records the backward pass (gcn/backward.go).
func (t *tracer) backward() {
	j := t.j
	dropout := j.Dropout > 0
	if j.OutputHead {
		pa, qa, ra := grid.Rotation(j.Layers)
		rows, in, out := t.rowsOf(pa, grid.OutputOrder(j.Layers-1)), t.width(j.headIn(), qa), t.width(j.Classes, ra)
		t.gemm("head.dW", -1, true, false, in, out, rows)
		t.allReduce("head.dW", -1, pa, in*out, 4)
		t.gemm("head.dX", -1, false, true, rows, in, out)
		t.allReduce("head.dX", -1, ra, rows*in, t.pmmBytes)
		if dropout {
			t.elementwise("head.dropout", -1, 2*float64(rows*in))
		}
	}
	specs := j.layers()
	for l := j.Layers - 1; l >= 0; l-- {
		sp := specs[l]
		if sp.heads > 0 {
			t.gatBackward(l, sp)
			continue
		}
		p, q, r := grid.Rotation(l)
		nP, nR := t.rowsOf(p, grid.InputOrder(l)), t.rowsOf(r, grid.OutputOrder(l))
		dIn, dOut := t.width(sp.in, q), t.width(sp.out, p)
		if sp.hidden {
			t.elementwise("relu", l, 3*float64(nR*dOut)) // ReLUBackward
			if sp.norm {
				// RMSNormBackwardLocal reads da and u; Finish reads
				// them and writes dZ.
				t.elementwise("norm", l, 5*float64(nR*dOut))
				t.allReduce("norm.scale", l, r, dOut, 4)
				t.allReduce("norm.dot", l, p, nR, 4)
			}
		}
		// A SAGE layer's dW_self and dS ride in the same all-reduces as
		// dW and dH (gcn's backward stacks them).
		stack := 1
		if sp.self {
			stack = 2
		}
		if !sp.needInputGrad {
			t.weightGrads(l, sp, dIn, dOut, nR)
			t.allReduce("dW", l, r, stack*dIn*dOut, 4)
			break
		}
		t.gemm("dH", l, false, true, nR, dIn, dOut)
		if sp.self {
			t.gemm("dS", l, false, true, nR, dIn, dOut)
		}
		t.weightGrads(l, sp, dIn, dOut, nR)
		t.allReduce("dW", l, r, stack*dIn*dOut, 4)
		t.allReduce("dH", l, p, stack*nR*dIn, t.pmmBytes)
		t.spmm("Aᵀ·dH", l, nP, nR, dIn, t.localNNZ(l, r, p))
		t.allReduce("dF", l, r, nP*dIn, t.pmmBytes)
		if sp.self {
			t.selfTerm(l, sp, true)
			t.elementwise("self", l, 3*float64(nP*dIn)) // Add
		}
		if dropout {
			t.elementwise("dropout", l, 2*float64(nP*dIn))
		}
		if sp.residual {
			t.residual(l, sp, true)
			t.elementwise("residual", l, 3*float64(nP*dIn)) // Add
		}
	}
	if j.InputProjection {
		rows, in, out := t.rowsOf(grid.X, 1), t.width(j.Features, grid.Z), t.width(j.Hidden, grid.Y)
		t.gemm("proj.dW", -1, true, false, in, out, rows)
		t.allReduce("proj.dW", -1, grid.X, in*out, 4)
	}
}

// weightGrads records the weight-gradient GEMMs of layer l: dW, and a
// SAGE layer's dW_self.
func (t *tracer) weightGrads(l int, sp layerSpec, dIn, dOut, nR int) {
	t.gemm("dW", l, true, false, dIn, dOut, nR)
	if sp.self {
		t.gemm("dWself", l, true, false, dIn, dOut, nR)
	}
}

// params returns this rank's parameter blocks: name and element count
// (gcn.Model.paramBlock).
func (t *tracer) params() []paramBlock {
	j := t.j
	var out []paramBlock
	if j.InputProjection {
		out = append(out, paramBlock{"proj", t.width(j.Features, grid.Z) * t.width(j.Hidden, grid.Y)})
	}
	for l, sp := range j.layers() {
		p, q, _ := grid.Rotation(l)
		if sp.heads > 0 {
			// W [rows Q, whole columns], both attention vectors whole
			// (gcn/params.go).
			out = append(out, paramBlock{fmt.Sprintf("gcn%d.weight", l), t.width(sp.in, q) * sp.proj},
				paramBlock{fmt.Sprintf("gcn%d.att_src", l), sp.proj}, paramBlock{fmt.Sprintf("gcn%d.att_dst", l), sp.proj})
			continue
		}
		out = append(out, paramBlock{fmt.Sprintf("gcn%d.weight", l), t.width(sp.in, q) * t.width(sp.out, p)})
		if sp.self {
			out = append(out, paramBlock{fmt.Sprintf("gcn%d.self", l), t.width(sp.in, q) * t.width(sp.out, p)})
		}
		if sp.norm {
			out = append(out, paramBlock{fmt.Sprintf("gcn%d.norm", l), t.width(sp.out, p)})
		}
	}
	if j.OutputHead {
		_, q, r := grid.Rotation(j.Layers)
		out = append(out, paramBlock{"head", t.width(j.headIn(), q) * t.width(j.Classes, r)})
	}
	return out
}

type paramBlock struct {
	name  string
	elems int
}

// optimizer records the data-parallel gradient all-reduce (mini-batch with
// Gd > 1) and the optimizer update.
func (t *tracer) optimizer() {
	var total int
	for _, pb := range t.params() {
		total += pb.elems
	}
	if t.j.Mode == gcn.MiniBatch {
		// gcn.Model.syncDP: every gradient block in one float32 call.
		t.phase = PhaseDP
		t.allReduceGroup("dp", -1, GroupDP, t.s.D, total, 4)
		if t.s.D > 1 {
			t.elementwise("dp.scale", -1, 2*float64(total)) // the average
		}
	}
	t.phase = PhaseBackward
	// OptimStep: one fused pass that reads the weights, gradients and both
	// moments and writes three of them (seven streams), in float64
	// arithmetic: eight units.
	t.elementwise("optimizer", -1, 8*float64(total))
}

// StepTrace returns what the rank at coordinates at does in one training
// step of job j on grid s: forward with dropout, loss, backward, the
// data-parallel gradient reduction and the optimizer update.
func StepTrace(j Job, s grid.Shape, at Coords, loc Local) Trace {
	t := newTracer(j, s, at, loc, true)
	t.phase = PhaseForward
	t.forward(true)
	t.phase = PhaseLoss
	t.loss()
	t.phase = PhaseBackward
	t.backward()
	t.optimizer()
	return t.tr
}

// EvalTrace returns what the rank does in one full-graph evaluation: a
// forward pass without dropout and the accuracy. Evaluation is full-graph
// in both modes, so loc.Rows is not used; loc.ResidualRows is, with the
// full graph's blocks.
func EvalTrace(j Job, s grid.Shape, at Coords, loc Local) Trace {
	t := newTracer(j, s, at, Local{ResidualRows: loc.ResidualRows}, false)
	t.phase = PhaseEval
	t.forward(false)
	t.accuracy()
	t.valLoss()
	return t.tr
}
