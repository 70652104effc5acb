package perfmodel

import (
	"scalegnn/collectives"
	"scalegnn/grid"
)

// The GAT layer on the 3D grid (docs/architecture.md, "A GAT layer's
// layout"). With rotation (P, Q, R), nP rows of the input order over P,
// nR rows of the output order over R, dIn = d_in/G_Q input columns, K
// heads and C = K·F' projection columns, a rank's layer is:
//
// forward                                  collective (elements, bytes each)
//   Y = F·W_block (nP × C)                 Y: AllReduce_Q  nP·C, CommDType
//   s, t = Y·a_src, Y·a_dst (nP × K)       —
//   s to rows R                            gat.s: alltoallv over the cube, K columns
//   scores, row max (nnz × K)              gat.max: AllReduce_P  nR·K, float32
//   exp, row sum                           gat.sum: AllReduce_P  nR·K, float32
//   α, α with attention dropout            —
//   O = α ⊛ Y (nR × C)                     O: AllReduce_P  nR·C, CommDType
//   O += b                                 —
//   ELU or the heads' mean, keep cols P    —
//
// backward
//   dO widened to whole rows               dO: AllReduce_P  nR·d_out, CommDType
//   through ELU or the mean (nR × C)       —
//   dα = dO·Yᵀ on the nonzeros             —
//   Σ_j α·dα                               gat.rowdot: AllReduce_P  nR·K, float32
//   logits' gradient, ds row sums          gat.ds: AllReduce_P  nR·K, float32
//   dt column sums (over the transpose),   gat.dt: AllReduce_R  nP·K + C, float32
//   db = dO's column sums over rows R
//   dY = αᵀ ⊛ dO (nP × C)                  dY: AllReduce_R  nP·C, CommDType
//   ds back to rows P                      gat.ds: alltoallv over the cube, K columns
//   dY += ds·a_srcᵀ + dt·a_dstᵀ            —
//   dW = Fᵀ·dY, da_src, da_dst             dW: AllReduce_P  dIn·C + 2·C, float32
//   dF = dY·W_blockᵀ (an input gradient)   —
//
// The per-edge work (nnz of the rank's shard block × K) and the
// aggregation over all C columns are repeated on the G_Q ranks that hold
// the same shard block; a GCN layer splits its aggregation's columns over
// Q instead. These collectives are the byte rule a GAT step obeys:
// TestGATStepVolumeMatchesCounters holds package gcn's counters to it.

// gatForward records GAT layer l's forward pass.
func (t *tracer) gatForward(l int, sp layerSpec, training bool) {
	p, q, r := grid.Rotation(l)
	nP, nR := t.rowsOf(p, grid.InputOrder(l)), t.rowsOf(r, grid.OutputOrder(l))
	dIn, dOut := t.width(sp.in, q), t.width(sp.out, p)
	c, k := sp.proj, sp.heads
	nnz := t.localNNZ(l, r, p)
	ek := nnz * float64(k) // per-edge elements
	dropout := training && t.j.Dropout > 0
	if dropout {
		t.elementwise("dropout", l, 2*float64(nP*dIn))
	}
	t.gemm("F·W", l, false, false, nP, c, dIn)
	t.allReduce("Y", l, q, nP*c, t.pmmBytes)
	// HeadDot: Y read once for both dot products, s and t written.
	t.elementwise("gat.headdot", l, float64(nP*c+2*nP*k))
	t.gatRedistribute(l, k, false)
	// GATScores reads s_i and t_j and writes e (the row max in the same
	// pass); GATExpSum reads e and writes exp(e − max); GATNormalize
	// reads it and writes α (and α with dropout).
	t.elementwise("gat.scores", l, 3*ek)
	t.allReduce("gat.max", l, p, nR*k, 4)
	t.elementwise("gat.exp", l, 2*ek)
	t.allReduce("gat.sum", l, p, nR*k, 4)
	norm := 2 * ek
	if dropout {
		norm += ek
	}
	t.elementwise("gat.alpha", l, norm)
	t.spmmHeads("α·Y", l, nR, nP, c, nnz)
	t.allReduce("O", l, p, nR*c, t.pmmBytes)
	t.elementwise("gat.bias", l, 2*float64(nR*c)) // O += b, in place
	if sp.hidden {
		t.elementwise("elu", l, 2*float64(nR*c))
	} else {
		t.elementwise("gat.mean", l, float64(nR*c+nR*sp.out))
	}
	t.elementwise("gat.block", l, 2*float64(nR*dOut)) // the column block kept
}

// gatBackward records GAT layer l's backward pass.
func (t *tracer) gatBackward(l int, sp layerSpec) {
	p, q, r := grid.Rotation(l)
	nP, nR := t.rowsOf(p, grid.InputOrder(l)), t.rowsOf(r, grid.OutputOrder(l))
	dIn := t.width(sp.in, q)
	c, k := sp.proj, sp.heads
	nnz := t.localNNZ(l, r, p)
	ek := nnz * float64(k)
	// The output gradient, zero-padded to whole rows.
	t.elementwise("gat.widen", l, float64(nR*sp.out))
	t.allReduce("dO", l, p, nR*sp.out, t.pmmBytes)
	if sp.hidden {
		t.elementwise("elu", l, 3*float64(nR*c))
	} else {
		t.elementwise("gat.mean", l, float64(nR*sp.out+nR*c))
	}
	// SDDMMHeads: a dot of F' per nonzero and head, nnz·C multiply-adds
	// over the same operands an SpMM of width C reads.
	t.spmmHeads("dα", l, nR, nP, c, nnz)
	if t.j.Dropout > 0 {
		t.elementwise("gat.dropout", l, 2*ek)
	}
	t.elementwise("gat.rowdot", l, 2*ek)
	t.allReduce("gat.rowdot", l, p, nR*k, 4)
	// GATLogitGrad reads α, dα, s_i and t_j and writes the logits'
	// gradient (ds in the same pass); EdgeSums reads it through the
	// transpose's positions.
	t.elementwise("gat.logitgrad", l, 5*ek)
	t.allReduce("gat.ds", l, p, nR*k, 4)
	t.elementwise("gat.edgesums", l, 2*ek)
	t.elementwise("gat.bias", l, float64(nR*c)) // dO's column sums
	t.allReduce("gat.dt", l, r, nP*k+c, 4)
	t.spmmHeads("αᵀ·dO", l, nP, nR, c, nnz)
	t.allReduce("dY", l, r, nP*c, t.pmmBytes)
	t.gatRedistribute(l, k, true)
	// HeadDotBackward reads and writes dY, HeadDotGrad reads Y.
	t.elementwise("gat.headdot", l, float64(3*nP*c+2*nP*k))
	t.elementwise("gat.attgrad", l, float64(2*nP*c))
	t.gemm("dW", l, true, false, dIn, c, nP)
	t.allReduce("dW", l, p, dIn*c+2*c, 4)
	if !sp.needInputGrad {
		return
	}
	t.gemm("dF", l, false, true, nP, dIn, c)
	if t.j.Dropout > 0 {
		t.elementwise("dropout", l, 2*float64(nP*dIn))
	}
}

// gatRedistribute records the move of s (K columns) from rows P of the
// input order to rows R of the output order forward, and of ds back in
// the backward pass: selfTerm's alltoallv with the K columns whole.
// Forward my targets share my R and Q coordinates and each of the G_P
// gets the rows of my P-block that land in my R-block; backward the G_R
// ranks sharing my P and Q coordinates get them. One rank holding the
// replica gathers rows on the device.
func (t *tracer) gatRedistribute(l, k int, backward bool) {
	p, _, r := grid.Rotation(l)
	name := "gat.s"
	if backward {
		name = "gat.ds"
	}
	if t.s.X*t.s.Y*t.s.Z == 1 {
		t.elementwise(name+".permute", l, 2*float64(t.rowsOf(r, grid.OutputOrder(l))*k))
		return
	}
	self := t.resRows(l, t.size(p), t.at.of(p), t.size(r), t.at.of(r)) * k
	copies := t.size(p)
	if backward {
		copies = t.size(r)
	}
	t.tr.Comm = append(t.tr.Comm, Collective{Phase: t.phase, Name: name, Layer: l, Kind: collectives.KindAlltoallv,
		Group: GroupCube, Size: t.s.X * t.s.Y * t.s.Z, Elems: int64(self * copies), ElemBytes: 4, SelfElems: int64(self)})
}
