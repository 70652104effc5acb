package perfmodel

import (
	"fmt"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
)

// The communicators of CAGNET's 1.5D algorithm (package cagnet).
const (
	// GroupRow is a process row: the c ranks that hold one block row.
	GroupRow Group = GroupDP + 1 + iota
	// GroupCol is a process column: the P/c ranks of one replica index.
	GroupCol
)

// CAGNETStepTrace is what rank `rank` of a P-rank, replication-c 1.5D job
// does in one training step, call by call as package cagnet makes them
// (CAGNET §V-B's cost terms refined to the actual calls): per layer, one
// broadcast over the process column for each of its stages (block row k's
// rows × the layer's input width) and an all-reduce of the partial ÂH
// over the process row; the loss's float64 sum over the process column;
// per layer backward, the dW all-reduce over the process column and, above
// the first layer, the staged broadcasts over Âᵀ again. Groups of one rank
// issue no call. A SAGE layer adds its self term's GEMMs and the
// all-reduce of dW_self; with CommDType bf16 the broadcasts and the
// partial sums travel as bfloat16. cagnet trains GCN and SAGE layers
// without extras; a GAT layer is modelled as cagnet_gat.go describes.
func CAGNETStepTrace(j Job, p, c, rank int) Trace {
	return newCAGNETTracer(j, p, c, rank).step()
}

// step is CAGNETStepTrace on t's block rows (a mini-batch's in
// CAGNETBatchStepTrace).
func (t *cagnetTracer) step() Trace {
	j := t.j
	specs := j.gcnConfig().LayerSpecs()
	t.forward(PhaseForward, j.Dropout > 0)
	// The loss and its gradient are computed on the host from the
	// downloaded logits (max, exp-sum, gradient: about six passes).
	t.elementwise(PhaseLoss, "loss", -1, 6*float64(t.rows*j.Classes))
	t.add(PhaseLoss, "loss.total", -1, collectives.KindAllReduce, GroupCol, t.q, 1, 8)
	var weights int
	for l := len(specs) - 1; l >= 0; l-- {
		s := specs[l]
		if s.Heads > 0 {
			weights += s.In*s.ProjWidth + 2*s.ProjWidth
			t.gatBackward(l, s)
			continue
		}
		weights += s.In * s.Out
		if s.Hidden {
			t.elementwise(PhaseBackward, "relu", l, 3*float64(t.rows*s.Out))
		}
		t.kernel(Kernel{Phase: PhaseBackward, Kind: KernelGEMM, Name: "dW", Layer: l, M: s.In, N: s.Out, K: t.rows, TransA: true})
		t.add(PhaseBackward, "dW", l, collectives.KindAllReduce, GroupCol, t.q, int64(s.In*s.Out), 4)
		if s.Self {
			weights += s.In * s.Out
			t.kernel(Kernel{Phase: PhaseBackward, Kind: KernelGEMM, Name: "dW.self", Layer: l, M: s.In, N: s.Out, K: t.rows, TransA: true})
			t.add(PhaseBackward, "dW.self", l, collectives.KindAllReduce, GroupCol, t.q, int64(s.In*s.Out), 4)
		}
		if !s.NeedInputGrad {
			break
		}
		t.kernel(Kernel{Phase: PhaseBackward, Kind: KernelGEMM, Name: "dH", Layer: l, M: t.rows, N: s.In, K: s.Out, TransB: true})
		t.aggregate(PhaseBackward, "dH", l, s.In)
		if s.Self {
			t.kernel(Kernel{Phase: PhaseBackward, Kind: KernelGEMM, Name: "dS", Layer: l, M: t.rows, N: s.In, K: s.Out, TransB: true})
		}
		if j.Dropout > 0 {
			t.elementwise(PhaseBackward, "dropout", l, 2*float64(t.rows*s.In))
		}
	}
	// The optimizer runs on the host in float64: seven streams per weight.
	t.elementwise(PhaseBackward, "optimizer", -1, 7*float64(weights))
	return t.tr
}

// CAGNETEvalTrace is what the rank does in one evaluation (cagnet's
// AccuracyAndValLoss): the forward pass without dropout, the argmax and
// the validation loss on the host, and the six hit counts and the loss
// sum summed over the process column (float64).
func CAGNETEvalTrace(j Job, p, c, rank int) Trace {
	t := newCAGNETTracer(j, p, c, rank)
	t.forward(PhaseEval, false)
	t.elementwise(PhaseEval, "accuracy", -1, float64(t.rows*j.Classes))
	t.elementwise(PhaseEval, "val_loss", -1, 2*float64(t.rows*j.Classes))
	t.add(PhaseEval, "accuracy", -1, collectives.KindAllReduce, GroupCol, t.q, 7, 8)
	return t.tr
}

// cagnetTracer records one rank's 1.5D calls.
type cagnetTracer struct {
	j            Job
	tr           Trace
	c, q, rows   int
	k0, k1       int
	nnz          float64         // expected nonzeros of one block Â_ik
	block        func(k int) int // rows of block row k (the graph's, or a mini-batch's)
	payloadBytes int             // element bytes of the partial sums
	bcastBytes   int             // element bytes of the GCN and SAGE broadcasts
}

func newCAGNETTracer(j Job, p, c, rank int) *cagnetTracer {
	if c < 1 || p%c != 0 || rank < 0 || rank >= p {
		panic(fmt.Sprintf("perfmodel: CAGNET trace (P=%d, c=%d, rank=%d): c must divide P and rank lie in [0, P)", p, c, rank))
	}
	q, row, col := p/c, rank/c, rank%c
	t := &cagnetTracer{j: j, c: c, q: q, rows: blockLen(j.N, q, row), nnz: float64(j.NNZ) / float64(q) / float64(q), payloadBytes: 4}
	t.k0, t.k1 = grid.Block(q, c, col)
	t.block = func(k int) int { return blockLen(j.N, q, k) }
	if j.CommDType == collectives.BF16 {
		t.payloadBytes = 2
	}
	t.bcastBytes = t.payloadBytes
	if j.Precision == device.BF16 {
		// The aggregation operands are bfloat16 in mixed precision
		// (cagnet/mixed.go) and travel so whatever comm_dtype says.
		t.bcastBytes = 2
	}
	return t
}

func (t *cagnetTracer) add(ph Phase, name string, l int, k collectives.Kind, g Group, size int, elems int64, eb int) {
	if size > 1 {
		t.tr.Comm = append(t.tr.Comm, Collective{Phase: ph, Name: name, Layer: l, Kind: k, Group: g, Size: size, Elems: elems, ElemBytes: eb})
	}
}

func (t *cagnetTracer) kernel(k Kernel) { t.tr.Kernels = append(t.tr.Kernels, k) }

func (t *cagnetTracer) elementwise(ph Phase, name string, l int, elems float64) {
	t.kernel(Kernel{Phase: ph, Kind: KernelElementwise, Name: name, Layer: l, Elems: elems})
}

// aggregate is cagnet's aggregate: per stage a broadcast of block row k
// over the process column, an SpMM and an accumulation; then the partial
// sums' all-reduce over the process row.
func (t *cagnetTracer) aggregate(ph Phase, name string, l, w int) {
	for k := t.k0; k < t.k1; k++ {
		inner := t.block(k)
		if t.bcastBytes == 2 {
			// bfloat16 halfwords travel two to a float32 word (cagnet's
			// ibcastBF16).
			t.add(ph, name, l, collectives.KindBcast, GroupCol, t.q, int64(inner*w+1)/2, 4)
		} else {
			t.add(ph, name, l, collectives.KindBcast, GroupCol, t.q, int64(inner*w), 4)
		}
		t.kernel(Kernel{Phase: ph, Kind: KernelSpMM, Name: name, Layer: l, Rows: t.rows, Inner: inner, Width: w, NNZ: t.nnz})
		t.elementwise(ph, name+".acc", l, 3*float64(t.rows*w))
	}
	t.add(ph, name+".sum", l, collectives.KindAllReduce, GroupRow, t.c, int64(t.rows*w), t.payloadBytes)
}

// forward is Model.Forward: per layer (input dropout when training),
// aggregation, the GEMM with W and the ReLU of hidden layers.
func (t *cagnetTracer) forward(ph Phase, dropout bool) {
	for l, s := range t.j.gcnConfig().LayerSpecs() {
		if dropout {
			t.elementwise(ph, "dropout", l, 2*float64(t.rows*s.In))
		}
		if s.Heads > 0 {
			t.gatForward(ph, l, s, dropout)
			continue
		}
		t.aggregate(ph, "H", l, s.In)
		t.kernel(Kernel{Phase: ph, Kind: KernelGEMM, Name: "Z", Layer: l, M: t.rows, N: s.Out, K: s.In})
		if s.Self {
			t.kernel(Kernel{Phase: ph, Kind: KernelGEMM, Name: "S·Wself", Layer: l, M: t.rows, N: s.Out, K: s.In})
		}
		if s.Hidden {
			t.elementwise(ph, "relu", l, 2*float64(t.rows*s.Out))
		}
	}
}

// blockRange is grid.Block for the stage split.
func blockRange(n, parts, i int) (int, int) { return grid.Block(n, parts, i) }
