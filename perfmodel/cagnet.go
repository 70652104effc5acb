package perfmodel

import (
	"fmt"

	"scalegnn/collectives"
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
// issue no call. Only the plain GCN is modelled (cagnet's scope).
func CAGNETStepTrace(j Job, p, c, rank int) Trace {
	if c < 1 || p%c != 0 || rank < 0 || rank >= p {
		panic(fmt.Sprintf("perfmodel: CAGNETStepTrace(P=%d, c=%d, rank=%d): c must divide P and rank lie in [0, P)", p, c, rank))
	}
	q, row, col := p/c, rank/c, rank%c
	k0, k1 := grid.Block(q, c, col)
	rows := blockLen(j.N, q, row)
	var tr Trace
	nnz := float64(j.NNZ) / float64(q) / float64(q) // expected nonzeros of one block Â_ik
	add := func(ph Phase, name string, l int, k collectives.Kind, g Group, size int, elems int64, eb int) {
		if size > 1 {
			tr.Comm = append(tr.Comm, Collective{Phase: ph, Name: name, Layer: l, Kind: k, Group: g, Size: size, Elems: elems, ElemBytes: eb})
		}
	}
	aggregate := func(ph Phase, name string, l, w int) {
		for k := k0; k < k1; k++ {
			add(ph, name, l, collectives.KindBcast, GroupCol, q, int64(blockLen(j.N, q, k)*w), 4)
			tr.Kernels = append(tr.Kernels, Kernel{Phase: ph, Kind: KernelSpMM, Name: name, Layer: l, Rows: rows, Inner: blockLen(j.N, q, k), Width: w, NNZ: nnz})
			tr.Kernels = append(tr.Kernels, Kernel{Phase: ph, Kind: KernelElementwise, Name: name + ".acc", Layer: l, Elems: float64(rows * w)})
		}
		add(ph, name+".sum", l, collectives.KindAllReduce, GroupRow, c, int64(rows*w), 4)
	}
	specs := j.gcnConfig().LayerSpecs()
	for l, s := range specs {
		aggregate(PhaseForward, "H", l, s.In)
		tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseForward, Kind: KernelGEMM, Name: "Z", Layer: l, M: rows, N: s.Out, K: s.In})
		if s.Hidden {
			tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseForward, Kind: KernelElementwise, Name: "relu", Layer: l, Elems: float64(rows * s.Out)})
		}
	}
	add(PhaseLoss, "loss.total", -1, collectives.KindAllReduce, GroupCol, q, 1, 8)
	for l := len(specs) - 1; l >= 0; l-- {
		s := specs[l]
		tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseBackward, Kind: KernelGEMM, Name: "dW", Layer: l, M: s.In, N: s.Out, K: rows, TransA: true})
		add(PhaseBackward, "dW", l, collectives.KindAllReduce, GroupCol, q, int64(s.In*s.Out), 4)
		if !s.NeedInputGrad {
			break
		}
		tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseBackward, Kind: KernelGEMM, Name: "dH", Layer: l, M: rows, N: s.In, K: s.Out, TransB: true})
		aggregate(PhaseBackward, "dH", l, s.In)
	}
	return tr
}

// blockRange is grid.Block for the stage split.
func blockRange(n, parts, i int) (int, int) { return grid.Block(n, parts, i) }
