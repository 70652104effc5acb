package perfmodel

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/method"
	"scalegnn/neighbor"
)

// NeighborGrid formats the neighbor mode's arrangement as predictions
// list it: every rank a data-parallel worker.
func NeighborGrid(ranks int) string { return fmt.Sprintf("neighbor Gd=%d", ranks) }

// NeighborParams is the number of scalar parameters of the job's model,
// the length of the gradient all-reduce: W per layer, and W_self too for
// SAGE, both attention vectors and the bias for GAT.
func (j Job) NeighborParams() int {
	n := 0
	for _, s := range j.layers() {
		if s.heads > 0 {
			n += s.in*s.proj + 3*s.proj // W, a_src, a_dst, bias
			continue
		}
		n += s.in * s.out
		if s.self {
			n += s.in * s.out
		}
	}
	return n
}

// NeighborStepBytes is what one rank hands to the training communicator
// in one step whose input frontier has remote rows requested by it and
// served rows requested of it: neighbor.StepBytes, the rule the byte
// counters obey, so the model and the counters cannot drift apart.
func (j Job) NeighborStepBytes(requested, served, ranks int) int64 {
	return neighbor.StepBytes(requested, served, j.neighborRowWords(), j.NeighborParams(), ranks)
}

// neighborRowWords is the float32 words a feature row takes in the
// exchange (neighbor.RowWords): half the features where they are in
// bfloat16 (gcn.FeaturesInBF16).
func (j Job) neighborRowWords() int {
	return neighbor.RowWords(j.Features, gcn.FeaturesInBF16(j.Precision))
}

// neighborRemote is the expected number of input-frontier rows a rank
// does not own: each is owned by another rank with probability
// (G−1)/G under the block split. It is the mean over ranks: on a graph
// whose high-degree vertices cluster in one block (an R-MAT graph
// without scrambled ids), that block's rank requests fewer rows and
// serves more.
func neighborRemote(frontier float64, ranks int) float64 {
	return frontier * float64(ranks-1) / float64(ranks)
}

// NeighborStepTrace is what one rank does in one training step of the
// neighbor mode with MFGs of sizes mfg (ExpectedMFGs, or a step's actual
// sizes) and requested/served remote rows, as package neighbor does it:
// the feature exchange (three alltoallv calls on the training
// communicator: a count to every rank, the ids, the rows), the forward
// pass per layer (SpMM on the sampled operator, the W GEMM, the W_self
// GEMM for SAGE, dropout and ReLU), the loss, the backward pass (dW,
// dW_self, and above the first layer dH through the operator's
// transpose), the gradient all-reduce and the optimizer.
func (j Job) NeighborStepTrace(ranks int, mfg []MFGSize, requested, served int) Trace {
	var tr Trace
	add := func(name string, k collectives.Kind, elems, self int64) {
		if ranks > 1 {
			tr.Comm = append(tr.Comm, Collective{Phase: PhaseForward, Name: name, Layer: -1, Kind: k, Group: GroupDP,
				Size: ranks, Elems: elems, ElemBytes: 4, SelfElems: self})
		}
	}
	kern := func(k Kernel) { tr.Kernels = append(tr.Kernels, k) }
	el := func(ph Phase, name string, l int, n float64) {
		kern(Kernel{Phase: ph, Kind: KernelElementwise, Name: name, Layer: l, Elems: n})
	}
	F := j.Features
	add("exchange.counts", collectives.KindAlltoallv, int64(ranks), 1)
	add("exchange.ids", collectives.KindAlltoallv, int64(requested), 0)
	add("exchange.rows", collectives.KindAlltoallv, int64(served)*int64(j.neighborRowWords()), 0)
	// Host copies: the frontier's rows assembled, the served rows
	// gathered, the frontier uploaded.
	el(PhaseForward, "exchange.copy", -1, (2*mfg[0].Src+float64(served))*float64(F))
	specs := j.layers()
	sage := j.Layer == gcn.SAGELayer
	nnz := func(l int) float64 {
		if sage {
			return mfg[l].Edges
		}
		return mfg[l].Edges + mfg[l].Dst // the self loops
	}
	for l, s := range specs {
		m := mfg[l]
		dst, src := int(math.Round(m.Dst)), int(math.Round(m.Src))
		el(PhaseForward, "upload", l, 4*nnz(l)+2*m.Src+m.Dst) // both operators and the source ids
		if j.Dropout > 0 {
			el(PhaseForward, "dropout", l, m.Src*float64(s.in))
		}
		if s.heads > 0 {
			j.neighborGATForward(&tr, l, s, m)
			continue
		}
		kern(Kernel{Phase: PhaseForward, Kind: KernelSpMM, Name: "H", Layer: l, Rows: dst, Inner: src, Width: s.in, NNZ: nnz(l)})
		kern(Kernel{Phase: PhaseForward, Kind: KernelGEMM, Name: "Z", Layer: l, M: dst, N: s.out, K: s.in})
		if sage {
			kern(Kernel{Phase: PhaseForward, Kind: KernelGEMM, Name: "self", Layer: l, M: dst, N: s.out, K: s.in})
		}
		if s.hidden {
			el(PhaseForward, "relu", l, m.Dst*float64(s.out))
		}
	}
	seeds := mfg[len(mfg)-1].Dst
	el(PhaseLoss, "loss", -1, 4*seeds*float64(j.Classes))
	for l := len(specs) - 1; l >= 0; l-- {
		s, m := specs[l], mfg[l]
		dst, src := int(math.Round(m.Dst)), int(math.Round(m.Src))
		if s.heads > 0 {
			j.neighborGATBackward(&tr, l, s, m)
			continue
		}
		if s.hidden {
			el(PhaseBackward, "relu", l, m.Dst*float64(s.out))
		}
		kern(Kernel{Phase: PhaseBackward, Kind: KernelGEMM, Name: "dW", Layer: l, M: s.in, N: s.out, K: dst, TransA: true})
		if sage {
			kern(Kernel{Phase: PhaseBackward, Kind: KernelGEMM, Name: "dW_self", Layer: l, M: s.in, N: s.out, K: dst, TransA: true})
		}
		if l == 0 {
			break
		}
		kern(Kernel{Phase: PhaseBackward, Kind: KernelGEMM, Name: "dAgg", Layer: l, M: dst, N: s.in, K: s.out, TransB: true})
		kern(Kernel{Phase: PhaseBackward, Kind: KernelSpMM, Name: "dH", Layer: l, Rows: src, Inner: dst, Width: s.in, NNZ: nnz(l)})
		if sage {
			kern(Kernel{Phase: PhaseBackward, Kind: KernelGEMM, Name: "dSelf", Layer: l, M: dst, N: s.in, K: s.out, TransB: true})
		}
		if j.Dropout > 0 {
			el(PhaseBackward, "dropout", l, m.Src*float64(s.in))
		}
	}
	p := int64(j.NeighborParams())
	if ranks > 1 {
		tr.Comm = append(tr.Comm, Collective{Phase: PhaseDP, Name: "dp.grads", Layer: -1, Kind: collectives.KindAllReduce,
			Group: GroupDP, Size: ranks, Elems: p, ElemBytes: 4})
		el(PhaseDP, "dp.scale", -1, float64(p))
	}
	el(PhaseDP, "optimizer", -1, 4*float64(p))
	return tr
}

// NeighborEvalTrace is one full-graph evaluation of the neighbor mode
// (neighbor.Evaluator) on the rank with the largest block: per layer
// the block's transform T = H·W, the halo exchange of the rows of T its
// operator's columns name on other ranks (neighborHalo), the aggregation
// of the block's rows (Â, or D^-1 A plus H·W_self for SAGE) and ReLU,
// with T downloaded and the block and halo uploaded; then the accuracy's
// arg-max and its all-reduce.
func (j Job) NeighborEvalTrace(ranks int) Trace {
	var tr Trace
	nb := blockLen(j.N, ranks, 0)
	halo := j.neighborHalo(ranks)
	el := func(name string, l int, n float64) {
		tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseEval, Kind: KernelElementwise, Name: name, Layer: l, Elems: n})
	}
	nnz := j.adjNNZ() * float64(nb) / float64(j.N)
	for l, s := range j.layers() {
		if s.heads > 0 {
			j.neighborGATEval(&tr, l, s, ranks, nb, nnz)
			continue
		}
		tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseEval, Kind: KernelGEMM, Name: "T", Layer: l, M: nb, N: s.out, K: s.in})
		j.haloExchange(&tr, "T", l, ranks, halo, s.out)
		el("copy", l, float64(nb*s.out)+2*float64(nb+halo)*float64(s.out))
		tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseEval, Kind: KernelSpMM, Name: "H", Layer: l, Rows: nb, Inner: nb + halo, Width: s.out, NNZ: nnz})
		if s.self {
			tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseEval, Kind: KernelGEMM, Name: "self", Layer: l, M: nb, N: s.out, K: s.in})
		}
		if s.hidden {
			el("relu", l, float64(nb*s.out))
		}
	}
	el("argmax", -1, float64(nb*j.Classes))
	el("val_loss", -1, 4*float64(nb*j.Classes))
	if ranks > 1 {
		// The six hit counts and the validation loss sum, in float64.
		tr.Comm = append(tr.Comm, Collective{Phase: PhaseEval, Name: "acc.hits", Layer: -1, Kind: collectives.KindAllReduce,
			Group: GroupDP, Size: ranks, Elems: 7, ElemBytes: 8})
	}
	return tr
}

// NeighborMemory is the peak memory of the rank with the largest block
// in the neighbor mode, for MFGs of sizes mfg:
//   - Adjacency: the replicated topology, Â and Â without its diagonal
//     (the sampler's rows), the self weights, the sampler's dense
//     global-to-local map (8 bytes a vertex), and the evaluator's rows of
//     the full-graph operator on the device;
//   - Features: the rank's 1/G block of the features, on the host and on
//     the device (the evaluator's copy), in bfloat16 in mixed precision,
//     every label and mask;
//   - Activations: the batches alive at once (two with prefetch: the one
//     training and the one being built), each with its MFGs, operators and
//     transposes, source ids and exchange plan; the device copies of one
//     step's operators; per layer the input, aggregation, output and
//     their gradients; the exchange's buffers; evaluation's block and
//     halo rows (neighborHalo) on the host and on the device, its
//     exchange buffers and its block's buffers;
//   - Weights: W, gradient and two moments, 4 bytes each;
//   - Dataset: the whole graph as loaded, unless the job loads sharded
//     data (a prepared dataset, which each rank reads only its feature
//     block of).
func (j Job) NeighborMemory(ranks int, mfg []MFGSize) Memory {
	var mem Memory
	n := int64(j.N)
	nb := int64(blockLen(j.N, ranks, 0))
	off := math.Max(0, float64(j.NNZ)-float64(j.N))
	mem.Adjacency = csrBytes(j.N, float64(j.NNZ)) + csrBytes(j.N, off) + 4*n + 8*n +
		csrBytes(int(nb), j.adjNNZ()*float64(nb)/float64(j.N))
	mem.Features = 2*j.heldFeatureBytes()*nb*int64(j.Features) + 4*n + 3*n
	sage := j.Layer == gcn.SAGELayer
	var batch, step, act, attention, evalEdges float64
	wmax := j.Classes
	for l, s := range j.layers() {
		m := mfg[l]
		e := m.Edges
		if !sage {
			e += m.Dst
		}
		// MFG's CSR and Src; the operator (a copy for GCN), its transpose.
		batch += float64(csrBytes(int(m.Dst), m.Edges)) + 4*m.Src + float64(csrBytes(int(m.Src), e))
		if !sage {
			batch += float64(csrBytes(int(m.Dst), e))
		}
		step += float64(csrBytes(int(m.Dst), e)+csrBytes(int(m.Src), e)) + 4*m.Src
		in, out := float64(s.in), float64(s.out)
		if s.heads > 0 {
			a, e := j.neighborGATActivations(s, m)
			act += a
			attention += e
			// Evaluation gathers Y (C columns) and scores its block's
			// rows over the whole graph, one layer at a time.
			wmax = max(wmax, s.proj)
			evalEdges = max(evalEdges, 4*j.adjNNZ()*float64(nb)/float64(j.N)*float64(s.heads))
		} else {
			act += 4 * (2*m.Src*in + 2*m.Dst*in + m.Dst*out) // in, din; agg, dagg; z
		}
		if j.Dropout > 0 {
			act += 8 * m.Src * math.Ceil(in/64)
		}
		wmax = max(wmax, s.out)
	}
	mem.Attention = int64(attention + evalEdges)
	batch += 4 * 2 * mfg[0].Src // the exchange plan
	batches := 1.0
	if j.Neighbor.Prefetch {
		batches = 2
	}
	r := neighborRemote(mfg[0].Src, ranks)
	exch := 4 * (mfg[0].Src*float64(j.Features) + 2*r*float64(j.neighborRowWords()))
	h := int64(j.neighborHalo(ranks))
	eval := 4 * float64(2*(nb+h)*int64(wmax)+2*h*int64(wmax)+4*nb*int64(wmax))
	mem.Activations = int64(batches*batch + step + act + exch + eval)
	mem.Weights = 16 * int64(j.NeighborParams())
	if !j.ShardedLoad {
		mem.Dataset = 8*(n+1) + csrBytes(j.N, float64(j.NNZ)) + 4*n*int64(j.Features) + 7*n
	}
	return mem
}

// PredictNeighbor predicts the neighbor mode on ranks ranks: each
// step's trace at the expected MFG sizes, timed with m's coefficients on
// the data-parallel group's link, times the steps of an epoch; the batch
// build (BuildEdge per sampled edge) added in full without prefetch, and
// only where it exceeds the step's time with it; and the full-graph
// evaluation spread over EvalEvery epochs. CommBytes counts the training
// bytes (NeighborStepBytes per step) and evaluation's.
func PredictNeighbor(j Job, m *Machine, ranks, ranksPerNode int, memPerRank int64) (Prediction, error) {
	j = j.withSeeds(ranks)
	if err := j.validateNeighbor(ranks); err != nil {
		return Prediction{}, err
	}
	pr := Prediction{Algorithm: method.NeighborSampling, Grid: NeighborGrid(ranks), Shape: grid.Shape{D: ranks, X: 1, Y: 1, Z: 1}}
	link := m.Links(pr.Shape, ranksPerNode)[GroupDP]
	mfg := j.ExpectedMFGs()
	r := int(math.Round(neighborRemote(mfg[0].Src, ranks)))
	steps := float64(j.NeighborSteps(ranks))
	var step Prediction
	addTrace(&step, j.NeighborStepTrace(ranks, mfg, r, r), link, m, j.Precision)
	build := j.Neighbor.BuildEdge
	if build == 0 {
		build = DefaultBuildEdge
	}
	var edges float64
	for _, l := range mfg {
		edges += l.Edges
	}
	sample := build * edges
	stepTime := step.Comm + step.SpMM + step.GEMM + step.Other
	if j.Neighbor.Prefetch {
		sample = math.Max(0, sample-stepTime)
	}
	pr.Comm, pr.SpMM, pr.GEMM, pr.Other = steps*step.Comm, steps*step.SpMM, steps*step.GEMM, steps*(step.Other+sample)
	pr.CommBytes = int64(steps) * j.NeighborStepBytes(r, r, ranks)
	if j.EvalEvery > 0 {
		var ev Prediction
		addTrace(&ev, j.NeighborEvalTrace(ranks), link, m, j.Precision)
		w := 1 / float64(j.EvalEvery)
		pr.Comm += w * ev.Comm
		pr.SpMM += w * ev.SpMM
		pr.GEMM += w * ev.GEMM
		pr.Other += w * ev.Other
		pr.CommBytes += int64(math.Round(w * float64(ev.CommBytes)))
	}
	pr.finish(j, j.NeighborMemory(ranks, mfg), memPerRank)
	return pr, nil
}

// addTrace adds one trace's collectives (all on link) and kernels, priced
// in precision prec, to p.
func addTrace(p *Prediction, tr Trace, link Link, m *Machine, prec device.Precision) {
	for _, c := range tr.Comm {
		p.Comm += CollectiveTime(c, link)
		p.CommBytes += c.Bytes()
	}
	p.addKernels(m, prec, tr.Kernels, 1)
}

// neighborHalo is the expected number of rows a rank's evaluation
// receives from the others (neighbor.Evaluator's halo): the distinct
// neighbours outside its block of the largest block's rows, the one-hop
// ball of those rows (ballOf, the mean field over the degree classes)
// less the rows themselves.
func (j Job) neighborHalo(ranks int) int {
	if ranks <= 1 {
		return 0
	}
	nb := float64(blockLen(j.N, ranks, 0))
	_, ball, _ := ballOf(j.degrees(), nb, 1, 1)
	return int(math.Round(math.Min(float64(j.N)-nb, math.Max(0, ball-nb))))
}

// haloExchange records one layer's halo exchange of w columns: an
// alltoallv over the ranks in which this rank receives halo rows and, a
// block among equal blocks, sends as many.
func (j Job) haloExchange(tr *Trace, name string, l, ranks, halo, w int) {
	if ranks <= 1 {
		return
	}
	tr.Comm = append(tr.Comm, Collective{Phase: PhaseEval, Name: name, Layer: l, Kind: collectives.KindAlltoallv,
		Group: GroupDP, Size: ranks, Elems: int64(halo * w), ElemBytes: 4})
}
