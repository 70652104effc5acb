package perfmodel

import (
	"scalegnn/collectives"
	"scalegnn/gcn"
)

// A GAT layer in CAGNET's 1.5D algorithm, call by call as package
// cagnet's gat.go makes them. A rank holds its block row's rows whole and
// the block columns of its stages, merged into one block, so the
// projection Y_i = H_i·W, s_i and t_i need no message. Forward, every
// stage broadcasts block row k's t_k (K columns, float32) over the
// process column, then every stage its Y_k (C columns, bfloat16 with
// CommDType bf16, packed two to a float32 word as GCN's broadcasts); the
// softmax's row max and row sum (rows × K each, float32) and the partial
// O (rows × C, bfloat16 with bf16) are all-reduced over the process row
// (groups of one rank issue no call). Backward, the stages broadcast Y_k
// again as forward; the row dot and ds (rows × K, float32) are
// all-reduced over the process row; the column sums dY and dt over the
// rank's stages' rows (all its stages at once: Σ inner × C, bfloat16 with
// bf16, and Σ inner × K, float32) are all-reduced over the process
// column, one call each; the replica owning the rank's block column then
// broadcasts dY_i and dt_i over the process row in float32 (rows × C and
// rows × K); the gradients of a_src and a_dst (C each) and of W (In × C)
// take one float32 all-reduce each over the process column.

// stageBcast records one stage's broadcast of w columns of block row k,
// of element size eb (2: bfloat16 halfwords two to a float32 word).
func (t *cagnetTracer) stageBcast(ph Phase, name string, l, inner, w, eb int) {
	if eb == 2 {
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
		t.stageBcast(ph, "t", l, t.block(st), k, 4)
	}
	for st := t.k0; st < t.k1; st++ {
		t.stageBcast(ph, "Y", l, t.block(st), c, t.payloadBytes)
	}
	t.add(ph, "gat.max", l, collectives.KindAllReduce, GroupRow, t.c, int64(t.rows*k), 4)
	t.add(ph, "gat.sum", l, collectives.KindAllReduce, GroupRow, t.c, int64(t.rows*k), 4)
	for st := t.k0; st < t.k1; st++ {
		inner := t.block(st)
		t.elementwise(ph, "gat.softmax", l, float64(7+boolInt(dropout))*ek)
		t.kernel(Kernel{Phase: ph, Kind: KernelSpMM, Name: "α·Y", Layer: l, Rows: t.rows, Inner: inner, Width: c, NNZ: t.nnz, Heads: true})
		t.elementwise(ph, "O.acc", l, 3*float64(t.rows*c))
	}
	t.add(ph, "O.sum", l, collectives.KindAllReduce, GroupRow, t.c, int64(t.rows*c), t.payloadBytes)
	t.elementwise(ph, "gat.bias", l, 2*float64(t.rows*c))
	if s.Hidden {
		t.elementwise(ph, "elu", l, 2*float64(t.rows*c))
	} else {
		t.elementwise(ph, "gat.mean", l, float64(t.rows*c+t.rows*s.Out))
	}
}

// gatBackward is GAT layer l's backward pass, the weight gradients'
// all-reduces included.
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
	var rr int // the rows of the rank's stages
	for st := t.k0; st < t.k1; st++ {
		inner := t.block(st)
		rr += inner
		t.stageBcast(ph, "Y", l, inner, c, t.payloadBytes)
		t.kernel(Kernel{Phase: ph, Kind: KernelSpMM, Name: "dα", Layer: l, Rows: t.rows, Inner: inner, Width: c, NNZ: t.nnz, Heads: true})
		t.elementwise(ph, "gat.softmax", l, float64(9+2*boolInt(dropout))*ek)
	}
	t.add(ph, "gat.rowdot", l, collectives.KindAllReduce, GroupRow, t.c, int64(t.rows*k), 4)
	t.add(ph, "gat.ds", l, collectives.KindAllReduce, GroupRow, t.c, int64(t.rows*k), 4)
	for st := t.k0; st < t.k1; st++ {
		inner := t.block(st)
		t.kernel(Kernel{Phase: ph, Kind: KernelSpMM, Name: "αᵀ·dO", Layer: l, Rows: inner, Inner: t.rows, Width: c, NNZ: t.nnz, Heads: true})
	}
	t.add(ph, "dY.col", l, collectives.KindAllReduce, GroupCol, t.q, int64(rr*c), t.payloadBytes)
	t.add(ph, "dt.col", l, collectives.KindAllReduce, GroupCol, t.q, int64(rr*k), 4)
	t.add(ph, "dY.owner", l, collectives.KindBcast, GroupRow, t.c, int64(t.rows*c), 4)
	t.add(ph, "dt.owner", l, collectives.KindBcast, GroupRow, t.c, int64(t.rows*k), 4)
	t.elementwise(ph, "gat.headdot", l, float64(5*t.rows*c+2*t.rows*k))
	t.add(ph, "da.src", l, collectives.KindAllReduce, GroupCol, t.q, int64(c), 4)
	t.add(ph, "da.dst", l, collectives.KindAllReduce, GroupCol, t.q, int64(c), 4)
	t.elementwise(ph, "gat.bias", l, float64(t.rows*c)) // dO's column sums
	t.add(ph, "db", l, collectives.KindAllReduce, GroupCol, t.q, int64(c), 4)
	t.kernel(Kernel{Phase: ph, Kind: KernelGEMM, Name: "dW", Layer: l, M: s.In, N: c, K: t.rows, TransA: true})
	t.add(ph, "dW", l, collectives.KindAllReduce, GroupCol, t.q, int64(s.In*c), 4)
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
// row dot, ds, dY with dt, and dH, and the ones that add the bias; and
// its per-edge arrays.
func (j Job) cagnetGATMemory(s gcn.LayerSpec, rows int64, nnz float64) (act, edges int64) {
	in, c, k, out := int64(s.In), int64(s.ProjWidth), int64(s.Heads), int64(s.Out)
	act = 4 * rows * (in + c + 4*k + c + out)
	if j.Dropout > 0 {
		act += 4 * rows * in // the input after dropout (its gradient's is dropped in place)
	}
	act += 4 * rows * (c + 2*k + c + k + in + 1)
	edges = int64(4 * float64(j.gatEdgeArrays(true)) * nnz * float64(k))
	return act, edges
}
