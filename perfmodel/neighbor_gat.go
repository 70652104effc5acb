package perfmodel

import "math"

// A GAT layer in the neighbor mode: a rank holds whole rows of its
// sampled blocks, so the softmax over a destination's edges is local and
// the layer adds no collective to a step; the gradient all-reduce grows
// by the attention vectors and the bias (NeighborParams). Per sampled block of Dst
// destinations, Src sources and nnz = Edges + Dst entries (the self
// loops), a step computes Y = H_src·W (Src × C: the projection runs on
// every source, where a GCN layer's GEMM runs on the destinations), s and
// t, the per-edge scores, softmax and α (nnz × K), O = α ⊛ Y + b, and
// backward the SDDMM for dα, the logits' gradient, ds and dt, dY = αᵀ ⊛ dO,
// dW = H_srcᵀ·dY and dH = dY·Wᵀ above the first layer.
//
// neighborGATForward appends GAT layer l's forward kernels on block m.
func (j Job) neighborGATForward(tr *Trace, l int, s layerSpec, m MFGSize) {
	kern := func(k Kernel) { tr.Kernels = append(tr.Kernels, k) }
	el := func(name string, n float64) {
		kern(Kernel{Phase: PhaseForward, Kind: KernelElementwise, Name: name, Layer: l, Elems: n})
	}
	dst, src := int(math.Round(m.Dst)), int(math.Round(m.Src))
	nnz := m.Edges + m.Dst
	c, k := float64(s.proj), float64(s.heads)
	kern(Kernel{Phase: PhaseForward, Kind: KernelGEMM, Name: "Y", Layer: l, M: src, N: s.proj, K: s.in})
	el("gat.headdot", m.Src*c+2*m.Src*k)
	el("gat.softmax", float64(7+boolInt(j.Dropout > 0))*nnz*k) // scores 3, exp 2, α 2 (+1 with dropout)
	kern(Kernel{Phase: PhaseForward, Kind: KernelSpMM, Name: "α·Y", Layer: l, Rows: dst, Inner: src, Width: s.proj, NNZ: nnz, Heads: true})
	el("gat.bias", 2*m.Dst*c)
	if s.hidden {
		el("elu", 2*m.Dst*c)
	} else {
		el("gat.mean", m.Dst*c+m.Dst*float64(s.out))
	}
}

// neighborGATBackward appends GAT layer l's backward kernels on block m.
func (j Job) neighborGATBackward(tr *Trace, l int, s layerSpec, m MFGSize) {
	kern := func(k Kernel) { tr.Kernels = append(tr.Kernels, k) }
	el := func(name string, n float64) {
		kern(Kernel{Phase: PhaseBackward, Kind: KernelElementwise, Name: name, Layer: l, Elems: n})
	}
	dst, src := int(math.Round(m.Dst)), int(math.Round(m.Src))
	nnz := m.Edges + m.Dst
	c, k := float64(s.proj), float64(s.heads)
	if s.hidden {
		el("elu", 3*m.Dst*c)
	} else {
		el("gat.mean", m.Dst*c+m.Dst*float64(s.out))
	}
	el("gat.bias", m.Dst*c) // dO's column sums
	kern(Kernel{Phase: PhaseBackward, Kind: KernelSpMM, Name: "dα", Layer: l, Rows: dst, Inner: src, Width: s.proj, NNZ: nnz, Heads: true})
	// rowdot 2, logits' gradient 5, EdgeSums 2 (+2 attention dropout).
	el("gat.softmax", float64(9+2*boolInt(j.Dropout > 0))*nnz*k)
	kern(Kernel{Phase: PhaseBackward, Kind: KernelSpMM, Name: "αᵀ·dO", Layer: l, Rows: src, Inner: dst, Width: s.proj, NNZ: nnz, Heads: true})
	el("gat.headdot", 5*m.Src*c+2*m.Src*k) // HeadDotBackward, HeadDotGrad
	kern(Kernel{Phase: PhaseBackward, Kind: KernelGEMM, Name: "dW", Layer: l, M: s.in, N: s.proj, K: src, TransA: true})
	if l == 0 {
		return
	}
	kern(Kernel{Phase: PhaseBackward, Kind: KernelGEMM, Name: "dH", Layer: l, M: src, N: s.in, K: s.proj, TransB: true})
	if j.Dropout > 0 {
		el("dropout", m.Src*float64(s.in))
	}
}

// neighborGATEval appends GAT layer l's evaluation on the block of nb
// rows: Y of the block, its halo exchange, t of the block and halo rows,
// the block's per-edge softmax over its neighbourhoods and O.
func (j Job) neighborGATEval(tr *Trace, l int, s layerSpec, ranks, nb int, nnz float64) {
	halo := j.neighborHalo(ranks)
	cols := nb + halo
	el := func(name string, n float64) {
		tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseEval, Kind: KernelElementwise, Name: name, Layer: l, Elems: n})
	}
	c, k := float64(s.proj), float64(s.heads)
	tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseEval, Kind: KernelGEMM, Name: "Y", Layer: l, M: nb, N: s.proj, K: s.in})
	j.haloExchange(tr, "Y", l, ranks, halo, s.proj)
	el("copy", float64(nb)*c+2*float64(cols)*c)
	el("gat.headdot", float64(cols)*c+float64(nb+cols)*k)
	el("gat.softmax", 7*nnz*k)
	tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseEval, Kind: KernelSpMM, Name: "α·Y", Layer: l, Rows: nb, Inner: cols, Width: s.proj, NNZ: nnz, Heads: true})
	el("gat.bias", 2*float64(nb)*c)
	if s.hidden {
		el("elu", 2*float64(nb)*c)
	} else {
		el("gat.mean", float64(nb)*c+float64(nb*s.out))
	}
}

// neighborGATActivations is a GAT layer's buffers on block m, bytes:
// the input and its gradient (Src × in), Y and dY (Src × C), s, t and dt
// (Src × K), the row max, sum, row dot and ds (Dst × K), O and dO
// (Dst × C), the output (Dst × out), the ones that add the bias (Dst);
// and its per-edge arrays.
func (j Job) neighborGATActivations(s layerSpec, m MFGSize) (act, edges float64) {
	in, c, k, out := float64(s.in), float64(s.proj), float64(s.heads), float64(s.out)
	act = 4 * (2*m.Src*in + 2*m.Src*c + 3*m.Src*k + 4*m.Dst*k + 2*m.Dst*c + m.Dst*out + m.Dst)
	edges = 4 * float64(j.gatEdgeArrays(true)) * (m.Edges + m.Dst) * k
	return act, edges
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
