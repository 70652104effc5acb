package perfmodel

import (
	"scalegnn/collectives"
	"scalegnn/gcn"
)

// A GAT layer in CAGNET's 1.5D algorithm, as this model counts it. A rank
// holds its block row's rows whole and the block columns of its stages,
// so the projection Y_i = H_i·W, s_i and t_i need no message; every
// stage broadcasts block row k's Y_k and t_k (C + K columns) over the
// process column, and the rank scores its own rows' edges of block Â_ik,
// so the per-edge work is split over the ranks, not repeated. With
// replication c > 1 a row's columns are spread over the c ranks of its
// process row: the softmax's max and sum (rows × K each) and the partial
// O (rows × C) are all-reduced over the process row. Backward, the stages
// broadcast Y_k again for dα on the rank's blocks; the row dot and ds are
// all-reduced over the process row (c > 1); dY and dt of block row k,
// partial sums of αᵀ ⊛ dO and of the logits' gradient over Â_ik's
// column, are summed over the process column per stage (inner × (C + K),
// like Âᵀ·dH's stages in reverse) and over the process row (c > 1); dW
// and both attention vectors' gradients take one all-reduce over the
// process column.
//
// To check once package cagnet trains GAT (branch h-cag26): every
// collective above (the stage sums over the process column are the
// guess most likely to differ: a reduce to the block row's owner, or
// broadcasts of dO over Âᵀ's blocks instead), their element types
// (bfloat16 for the broadcasts and partial sums with CommDType bf16, as
// GCN's; float32 for the softmax statistics and dt), and the per-edge
// arrays it keeps.

// stageBcast records one stage's broadcast of w columns of block row k.
func (t *cagnetTracer) stageBcast(ph Phase, name string, l, inner, w int) {
	if t.payloadBytes == 2 {
		t.add(ph, name, l, collectives.KindBcast, GroupCol, t.q, int64(inner*w+1)/2, 4)
		return
	}
	t.add(ph, name, l, collectives.KindBcast, GroupCol, t.q, int64(inner*w), 4)
}

// gatForward is GAT layer l's forward pass.
func (t *cagnetTracer) gatForward(ph Phase, l int, s gcn.LayerSpec, dropout bool) {
	c, k := s.ProjWidth, s.Heads
	ek := t.nnz * float64(k)
	t.kernel(Kernel{Phase: ph, Kind: KernelGEMM, Name: "Y", Layer: l, M: t.rows, N: c, K: s.In})
	t.elementwise(ph, "gat.headdot", l, float64(t.rows*c+2*t.rows*k))
	for st := t.k0; st < t.k1; st++ {
		inner := t.block(st)
		t.stageBcast(ph, "Y", l, inner, c+k)
		t.elementwise(ph, "gat.softmax", l, float64(7+boolInt(dropout))*ek)
		t.kernel(Kernel{Phase: ph, Kind: KernelSpMM, Name: "α·Y", Layer: l, Rows: t.rows, Inner: inner, Width: c, NNZ: t.nnz})
		t.elementwise(ph, "O.acc", l, 3*float64(t.rows*c))
	}
	t.add(ph, "gat.max", l, collectives.KindAllReduce, GroupRow, t.c, int64(t.rows*k), 4)
	t.add(ph, "gat.sum", l, collectives.KindAllReduce, GroupRow, t.c, int64(t.rows*k), 4)
	t.add(ph, "O.sum", l, collectives.KindAllReduce, GroupRow, t.c, int64(t.rows*c), t.payloadBytes)
	if s.Hidden {
		t.elementwise(ph, "elu", l, 2*float64(t.rows*c))
	} else {
		t.elementwise(ph, "gat.mean", l, float64(t.rows*c+t.rows*s.Out))
	}
}

// gatBackward is GAT layer l's backward pass, dW's all-reduce included.
func (t *cagnetTracer) gatBackward(l int, s gcn.LayerSpec) {
	ph := PhaseBackward
	c, k := s.ProjWidth, s.Heads
	ek := t.nnz * float64(k)
	dropout := t.j.Dropout > 0
	if s.Hidden {
		t.elementwise(ph, "elu", l, 3*float64(t.rows*c))
	} else {
		t.elementwise(ph, "gat.mean", l, float64(t.rows*c+t.rows*s.Out))
	}
	for st := t.k0; st < t.k1; st++ {
		inner := t.block(st)
		t.stageBcast(ph, "Y", l, inner, c)
		t.kernel(Kernel{Phase: ph, Kind: KernelSpMM, Name: "dα", Layer: l, Rows: t.rows, Inner: inner, Width: c, NNZ: t.nnz})
		t.elementwise(ph, "gat.softmax", l, float64(9+2*boolInt(dropout))*ek)
	}
	t.add(ph, "gat.rowdot", l, collectives.KindAllReduce, GroupRow, t.c, int64(t.rows*k), 4)
	t.add(ph, "gat.ds", l, collectives.KindAllReduce, GroupRow, t.c, int64(t.rows*k), 4)
	for st := t.k0; st < t.k1; st++ {
		inner := t.block(st)
		t.kernel(Kernel{Phase: ph, Kind: KernelSpMM, Name: "αᵀ·dO", Layer: l, Rows: inner, Inner: t.rows, Width: c, NNZ: t.nnz})
		t.add(ph, "dY", l, collectives.KindAllReduce, GroupCol, t.q, int64(inner*(c+k)), 4)
	}
	t.add(ph, "dY.sum", l, collectives.KindAllReduce, GroupRow, t.c, int64(t.rows*(c+k)), 4)
	t.elementwise(ph, "gat.headdot", l, float64(5*t.rows*c+2*t.rows*k))
	t.kernel(Kernel{Phase: ph, Kind: KernelGEMM, Name: "dW", Layer: l, M: s.In, N: c, K: t.rows, TransA: true})
	t.add(ph, "dW", l, collectives.KindAllReduce, GroupCol, t.q, int64(s.In*c+2*c), 4)
	if !s.NeedInputGrad {
		return
	}
	t.kernel(Kernel{Phase: ph, Kind: KernelGEMM, Name: "dH", Layer: l, M: t.rows, N: s.In, K: c, TransB: true})
	if dropout {
		t.elementwise(ph, "dropout", l, 2*float64(t.rows*s.In))
	}
}

// cagnetGATMemory is a GAT layer's buffers on a rank of rows rows whose
// stages hold nnz nonzeros, bytes: the input (and its dropped copy),
// Y, s, t, the row max and sum, O and the output, and backward dO, the
// row dot, ds, dY with dt, and dH; and its per-edge arrays.
func (j Job) cagnetGATMemory(s gcn.LayerSpec, rows int64, nnz float64) (act, edges int64) {
	in, c, k, out := int64(s.In), int64(s.ProjWidth), int64(s.Heads), int64(s.Out)
	act = 4 * rows * (in + c + 4*k + c + out)
	if j.Dropout > 0 {
		act += 4 * rows * 2 * in
	}
	act += 4 * rows * (c + 2*k + c + k + in)
	edges = int64(4 * float64(j.gatEdgeArrays(true)) * nnz * float64(k))
	return act, edges
}
