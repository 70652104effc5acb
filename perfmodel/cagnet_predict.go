package perfmodel

import (
	"fmt"
	"math"
	"sort"

	"scalegnn/cagnet"
	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/method"
	"scalegnn/spmm"
)

// CAGNETGrid formats a 1.5D arrangement as predictions list it:
// "1.5d QxC" (P/c process rows × c replicas).
func CAGNETGrid(p, c int) string { return fmt.Sprintf("1.5d %dx%d", p/c, c) }

// cagnetLinks: process rows are c consecutive world ranks, process columns
// ranks c apart. A group within one node uses the intra-node link (and
// intra reports it); otherwise the inter-node link, shared by the groups
// of its kind leaving a node at once (c columns per node, or one row per
// node's ranks/c).
func (m *Machine) cagnetLinks(p, c, ranksPerNode int) (links map[Group]Link, intra map[Group]bool) {
	if ranksPerNode <= 0 || ranksPerNode > p {
		ranksPerNode = p
	}
	links = map[Group]Link{GroupRow: m.Comm.Intra, GroupCol: m.Comm.Intra}
	intra = map[Group]bool{GroupRow: true, GroupCol: true}
	if c > ranksPerNode || ranksPerNode%c != 0 {
		links[GroupRow], intra[GroupRow] = m.Comm.Inter, false
	}
	if p > ranksPerNode {
		l := m.Comm.Inter
		l.Bandwidth /= float64(min(c, ranksPerNode))
		links[GroupCol], intra[GroupCol] = l, false
	}
	return links, intra
}

// cagnetCommTime is CollectiveTime, except that a broadcast within a node
// takes the machine's measured broadcast cost when the profile has one
// (Machine.Comm.Bcast): ⌈log2 p⌉·α + M/β.
func (m *Machine) cagnetCommTime(cl Collective, l Link, intra bool) float64 {
	b := m.Comm.Bcast
	if cl.Kind != collectives.KindBcast || b.Bandwidth <= 0 || !intra || cl.Size <= 1 {
		return CollectiveTime(cl, l)
	}
	return math.Ceil(math.Log2(float64(cl.Size)))*b.Latency + float64(cl.Bytes())/(b.Bandwidth*1e9)
}

// CAGNETMemory is rank 0's memory in 1.5D: its share of Â and Âᵀ (one
// block row, the block columns of its stages, nonzeros in expectation),
// its block row of the features and vertex ids, the labels and masks
// indexed by position (N entries, its block row filled: cagnet's
// readBlockRow), per layer the tape ((ÂH)_i and Z_i) and the backward
// pass's buffers (reused from step to step), the broadcast buffers of one
// aggregation, and the replicated weights (W_self too for SAGE): W, its
// gradient and both moments in float64 on the host, their float32
// staging, and W and the gradient in float32 on the device (4·4 + 4·8
// bytes per entry). Dataset is the whole graph an in-memory source loads
// on every rank before cagnet cuts its block rows; a prepared dataset
// (Job.ShardedLoad) is read block row by block row, so it has none. In
// mixed precision Staging bounds the device's bfloat16 operands by the
// widest layer's block rows.
func CAGNETMemory(j Job, p, c int) Memory {
	q := p / c
	rows := int64(blockLen(j.N, q, 0))
	k0, k1 := 0, 0
	if q > 0 {
		k0, k1 = blockRange(q, c, 0)
	}
	stages := int64(k1 - k0)
	nnz := float64(j.NNZ) * float64(stages) / float64(q) / float64(q)
	var mem Memory
	mem.Adjacency = 2 * stages * csrBytes(int(rows), nnz/float64(max(stages, 1)))
	specs := j.gcnConfig().LayerSpecs()
	featB := cagnet.FeaturesInBF16(specs, j.Precision)
	mem.Features = rows*int64(j.Features)*j.cagnetFeatureBytes() + 4*rows + 7*int64(j.N)
	var weights, maxW, widest int64
	// The buffers the model keeps one of per width, not per layer:
	// GCN layers' input after dropout (cagnet's inBuf), and the backward
	// pass's gw, dz.even and dz.odd of layers with an input gradient. In
	// mixed precision (cagnet/mixed.go) a GCN layer's input is dropped
	// through the scratch (no float32 copy) and gw is bfloat16; there are
	// also the bfloat16 aggregation operands packed from a float32 input
	// (in.b), the partial sums of an aggregation (ah.sum, din.sum; not on
	// one rank), the bfloat16 dZ (dz.b) and the scratch of the products
	// rounded a block of rows at a time; dz.even and dz.odd only where
	// the previous layer's output is not kept in bfloat16.
	sharedIn, sharedGrad := map[int]bool{}, map[int]bool{}
	packedIn, sums, dzb, scratch, dzPair := map[int]bool{}, map[int]bool{}, map[int]bool{}, map[int]bool{}, map[int]bool{}
	mixed, noGAT := j.Precision == device.BF16, true
	for l, s := range specs {
		widest = max(widest, int64(s.In), int64(s.Out), int64(s.ProjWidth+s.Heads))
		if s.Heads > 0 {
			act, edges := j.cagnetGATMemory(s, rows, nnz)
			mem.Activations += act
			mem.Attention += edges
			weights += int64(s.In*s.ProjWidth + 2*s.ProjWidth)
			maxW = max(maxW, int64(s.In), int64(s.ProjWidth+s.Heads))
			noGAT = false
			continue
		}
		inKept := mixed && l > 0 && cagnet.KeepsOut(specs, l-1, len(specs)-1, j.Precision)
		switch {
		case !mixed:
			mem.Activations += 4 * rows * int64(s.In+s.Out) // ÂH, Z (the ReLU in place)
		case cagnet.KeepsOut(specs, l, len(specs)-1, j.Precision):
			// ÂH and the output in bfloat16, the ReLU's positions in
			// bits, and the next layer's dropout mask.
			mem.Activations += 2*rows*int64(s.In+s.Out) + 8*rows*int64(spmm.MaskWords(s.Out))
			if j.Dropout > 0 {
				mem.Activations += 8 * rows * int64(spmm.MaskWords(s.Out))
			}
			scratch[s.Out] = true
		default:
			mem.Activations += 2*rows*int64(s.In) + 4*rows*int64(s.Out)
		}
		// Layer 0 reads the bfloat16 features themselves, or in training
		// with dropout its own bfloat16 copy of them, dropped through
		// the scratch (cagnet/features_bf16.go), which a SAGE self term
		// reads too.
		feat0 := l == 0 && featB
		if feat0 && j.Dropout > 0 {
			mem.Activations += 2 * rows * int64(s.In)
			scratch[s.In] = true
		}
		if mixed {
			dzb[s.Out] = true
			switch {
			case inKept || feat0:
			case s.Self:
				// SAGE's own rounded input, which its self term's weight
				// gradient reads back (self.in).
				mem.Activations += 2 * rows * int64(s.In)
			default:
				packedIn[s.In] = true
			}
			if p > 1 {
				sums[s.In] = true
			}
		}
		switch {
		case feat0:
		case j.Dropout > 0 && mixed && !inKept:
			scratch[s.In] = true
		case j.Dropout > 0 && s.Self && !mixed:
			mem.Activations += 4 * rows * int64(s.In) // SAGE's input after dropout, read back
		case j.Dropout > 0 && !mixed:
			sharedIn[s.In] = true
		}
		switch {
		case s.NeedInputGrad && !mixed:
			sharedGrad[s.In] = true
		case s.NeedInputGrad:
			sharedGrad[s.In], scratch[s.In] = true, true
			if inKept {
				// Masked and rounded as the SpMM writes it on one rank,
				// else (or with SAGE's dS to add) summed in float32 first.
				dzb[s.In] = true
				if p > 1 || s.Self {
					sums[s.In] = true
				}
			} else {
				dzPair[s.In] = true
			}
		}
		if l == len(specs)-1 {
			mem.Activations += 4 * rows * int64(s.Out) // the loss's gradient
		}
		weights += int64(s.In * s.Out)
		if s.Self {
			weights += int64(s.In * s.Out) // SAGE's W_self
		}
		maxW = max(maxW, int64(s.In))
	}
	for w := range sharedIn {
		mem.Activations += 4 * rows * int64(w)
	}
	gradBytes := int64(3 * 4) // gw, dz.even, dz.odd
	if mixed {
		gradBytes = 2 // gw in bfloat16; dz.even and dz.odd in dzPair
	}
	for w := range sharedGrad {
		mem.Activations += gradBytes * rows * int64(w)
	}
	for w := range dzPair {
		mem.Activations += 2 * 4 * rows * int64(w)
	}
	for w := range packedIn {
		mem.Activations += 2 * rows * int64(w)
	}
	for w := range sums {
		mem.Activations += 4 * rows * int64(w)
	}
	for w := range dzb {
		mem.Activations += 2 * rows * int64(w)
	}
	for w := range scratch {
		mem.Activations += 4 * int64(w) * int64(cagnet.ScratchRows(int(rows), w))
	}
	stageBytes := int64(4)
	if mixed {
		stageBytes = 2 // the stages receive bfloat16 operands
	}
	// Broadcast buffers (one per stage) and the partial sums' two.
	mem.Activations += (stageBytes*stages + 4*2) * (int64(j.N)/int64(q) + 1) * maxW
	mem.Weights = weights * (4*4 + 4*8)
	if mixed {
		mem.Weights += 2 * weights // the weights rounded to bfloat16 on the device
		// The device's staging holds the largest first operand of a GEMM
		// (a block row of an activation or a gradient: rows × a width)
		// and the largest second operand of a GEMM or dense operand of
		// an SpMM (a weight, or a stage's block row, up to N/q+1 rows):
		// at most the widest layer's width for both. A model of GCN and
		// SAGE layers reads every operand in bfloat16 and stages none.
		stage := max(int64(j.N)/int64(max(q, 1))+1, widest)
		mem.Staging, mem.stagingKnown = 2*(rows+stage)*widest, true
		if noGAT {
			mem.Staging = 0
		}
	}
	if !j.ShardedLoad {
		mem.Dataset = 8*int64(j.N+1) + csrBytes(j.N, float64(j.NNZ)) + 4*int64(j.N)*int64(j.Features) + 7*int64(j.N)
	}
	return mem
}

// cagnetFeatureBytes is the bytes of a feature a 1.5D rank holds:
// cagnet.FeaturesInBF16's rule.
func (j Job) cagnetFeatureBytes() int64 {
	if cagnet.FeaturesInBF16(j.gcnConfig().LayerSpecs(), j.Precision) {
		return 2
	}
	return 4
}

// CAGNETShape is the Shape of a 1.5D prediction: X = P/c process rows,
// Y = c replicas (Z = D = 1). With Algorithm it identifies the
// configuration, as GridString's shape does a 3D grid's.
func CAGNETShape(p, c int) grid.Shape { return grid.Shape{D: 1, X: p / c, Y: c, Z: 1} }

// PredictCAGNET predicts 1.5D with P ranks and replication c: rank 0's
// training step plus, weighted 1/eval_every, its evaluation, as
// PredictShape counts a 3D grid's.
func PredictCAGNET(j Job, m *Machine, p, c, ranksPerNode int, memPerRank int64) Prediction {
	pr := Prediction{Algorithm: method.CAGNET, Shape: CAGNETShape(p, c), Grid: CAGNETGrid(p, c)}
	links, intra := m.cagnetLinks(p, c, ranksPerNode)
	m.cagnetPredict(&pr, j, j, p, c, links, intra, CAGNETStepTrace(j, p, c, 0), 1)
	pr.finish(j, CAGNETMemory(j, p, c), memPerRank)
	return pr
}

// cagnetPredict adds to pr steps training steps of trace step (whose
// SpMMs, under SpMMPlexus, are those of job sj: the graph, or the batch)
// and, weighted 1/eval_every, one full-graph evaluation of j, on the
// process rows' and columns' links (and the replicas', when links has
// them).
func (m *Machine) cagnetPredict(pr *Prediction, j, sj Job, p, c int, links map[Group]Link, intra map[Group]bool, step Trace, steps float64) {
	add := func(tr Trace, weight float64) {
		for _, cl := range tr.Comm {
			pr.Comm += weight * m.cagnetCommTime(cl, links[cl.Group], intra[cl.Group])
			pr.CommBytes += int64(math.Round(weight * float64(cl.Bytes())))
		}
		pr.addKernels(m, j.Precision, tr.Kernels, weight)
	}
	add(step, steps)
	if m.SpMM.Form == SpMMPlexus {
		pr.SpMM += steps * m.cagnetPlexusSpMM(sj, p, c, true)
	}
	if j.EvalEvery > 0 {
		w := 1 / float64(j.EvalEvery)
		add(CAGNETEvalTrace(j, p, c, 0), w)
		if m.SpMM.Form == SpMMPlexus {
			pr.SpMM += w * m.cagnetPlexusSpMM(j, p, c, false)
		}
	}
}

// cagnetPlexusSpMM is the SpMM time under SpMMPlexus, whose eq. 4.4 is
// fitted on 3D grids: a rank's 1.5D SpMMs multiply N/q rows of Â (and of
// Âᵀ backward) by the layer's whole width, the work of a 3D grid with q
// row blocks and no feature split (G_P = G_R = q, G_Q = 1), on the same
// NNZ·D/P nonzero-columns per rank. Forward only when training is false.
func (m *Machine) cagnetPlexusSpMM(j Job, p, c int, training bool) float64 {
	var t float64
	q := float64(p / c)
	n := float64(j.N)
	for l, sp := range j.layers() {
		d := float64(sp.in)
		if sp.heads > 0 {
			d = float64(sp.proj) // α ⊛ Y aggregates the projection
		}
		ratio := n / q / d
		term := m.SpMM.Flops + m.SpMM.Fwd*ratio
		if training && l > 0 {
			term += m.SpMM.Bwd * ratio
		}
		t += math.Sqrt(float64(j.NNZ)*d) * term
	}
	return math.Max(t, 0)
}

// PredictCAGNETAll predicts every replication c dividing P, best first
// (fitting ones by epoch time, then the rest), like Predict for 3D grids.
func PredictCAGNETAll(j Job, m *Machine, o Options) []Prediction {
	var out []Prediction
	for c := 1; c <= o.Ranks; c++ {
		if o.Ranks%c == 0 {
			out = append(out, PredictCAGNET(j, m, o.Ranks, c, o.RanksPerNode, o.MemPerRank))
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Fits != out[b].Fits {
			return out[a].Fits
		}
		return out[a].Epoch < out[b].Epoch
	})
	return out
}
