package perfmodel

import (
	"fmt"
	"math"
	"sort"

	"scalegnn/collectives"
	"scalegnn/grid"
	"scalegnn/method"
)

// CAGNETBatchStepTrace is what rank `rank` of a replica of P ranks
// (replication c) does in one 1.5D mini-batch step with d replicas
// (cagnet.MiniBatch): CAGNETStepTrace on the batch's block rows — rows(k)
// rows in block row k, the sample's members of the full graph's block row
// k; nil takes ⌈B/q⌉, the block 4D's prediction takes for a batch — with
// the batch's expected nonzeros (Job.stepNNZ) spread over the q² blocks,
// then the replicas' gradient all-reduce: every weight in one float32
// call over the d replicas, as gcn.Model.syncDP makes it.
func CAGNETBatchStepTrace(j Job, d, p, c, rank int, rows func(k int) int) Trace {
	t := newCAGNETTracer(j, p, c, rank)
	if rows == nil {
		b, q := j.BatchSize, t.q
		rows = func(int) int { return min(b, (b+q-1)/q) }
	}
	t.block, t.rows = rows, rows(rank/c)
	t.nnz = j.stepNNZ() / float64(t.q) / float64(t.q)
	tr := t.step()
	if d > 1 {
		var weights int64
		for _, s := range j.gcnConfig().LayerSpecs() {
			if s.Heads > 0 {
				weights += int64(s.In*s.ProjWidth + 2*s.ProjWidth)
				continue
			}
			weights += int64(s.In * s.Out)
			if s.Self {
				weights += int64(s.In * s.Out)
			}
		}
		tr.Comm = append(tr.Comm, Collective{Phase: PhaseDP, Name: "dp", Layer: -1, Kind: collectives.KindAllReduce,
			Group: GroupDP, Size: d, Elems: weights, ElemBytes: 4})
	}
	return tr
}

// CAGNETBatchShape is the Shape of a 1.5D mini-batch prediction: d
// replicas of P/c process rows × c (CAGNETShape with D = d).
func CAGNETBatchShape(d, p, c int) grid.Shape { return grid.Shape{D: d, X: p / c, Y: c, Z: 1} }

// CAGNETBatchGrid formats it as predictions list it: "1.5d d=D QxC", or
// CAGNETGrid's "1.5d QxC" for one replica.
func CAGNETBatchGrid(d, p, c int) string {
	if d > 1 {
		return fmt.Sprintf("1.5d d=%d %dx%d", d, p/c, c)
	}
	return CAGNETGrid(p, c)
}

// PredictCAGNETBatch predicts 1.5D mini-batch training on d replicas of P
// ranks with replication c: rank 0's steps of an epoch (Job.Steps) with
// the expected batch blocks, plus, weighted 1/eval_every, its full-graph
// evaluation (CAGNETEvalTrace: every replica evaluates, as 4D's). The
// process rows and columns take cagnetLinks within the replica's P
// consecutive ranks; the replicas' all-reduce the DP link of a 4D grid
// whose replicas are laid out alike (Links of d × P×1×1).
func PredictCAGNETBatch(j Job, m *Machine, d, p, c, ranksPerNode int, memPerRank int64) Prediction {
	pr := Prediction{Algorithm: method.CAGNET, Shape: CAGNETBatchShape(d, p, c), Grid: CAGNETBatchGrid(d, p, c)}
	links, intra := m.cagnetLinks(p, c, ranksPerNode)
	links[GroupDP] = m.Links(grid.Shape{D: d, X: p, Y: 1, Z: 1}, ranksPerNode)[GroupDP]
	batch := j
	batch.N, batch.NNZ = j.BatchSize, int64(math.Round(j.stepNNZ()))
	m.cagnetPredict(&pr, j, batch, p, c, links, intra, CAGNETBatchStepTrace(j, d, p, c, 0, nil), float64(j.Steps()))
	pr.finish(j, CAGNETBatchMemory(j, p, c), memPerRank)
	return pr
}

// CAGNETBatchMemory is CAGNETMemory (the full graph's block row on the
// device, for evaluation, and buffers sized for it, which a batch's rows
// reuse) plus what mini-batches add on rank 0: the host copies of its
// stages' blocks of Â and Âᵀ that batches are cut from, the extracted
// batch blocks (expected nonzeros with the extractor's quarter of slack),
// the batch's features, and the whole training mask and the sample's
// positions and ids.
func CAGNETBatchMemory(j Job, p, c int) Memory {
	mem := CAGNETMemory(j, p, c)
	q := p / c
	rows := int64(blockLen(j.N, q, 0))
	k0, k1 := blockRange(q, c, 0)
	stages := int64(k1 - k0)
	mem.Adjacency *= 2
	b := int64(j.BatchSize)
	brows := min(b, (b+int64(q)-1)/int64(q))
	bnnz := 1.25 * j.stepNNZ() / float64(q) / float64(q)
	mem.Adjacency += 2 * stages * csrBytes(int(brows), bnnz)
	mem.Features += rows*int64(j.Features)*j.cagnetFeatureBytes() + 2*4*rows // a batch's features, positions and ids
	mem.Dataset += int64(j.N) + 8*b
	return mem
}

// PredictCAGNETBatchAll predicts every (d, c) of o.Ranks ranks: every
// d dividing them (only o.D when set) and every c dividing P = ranks/d,
// best first as PredictCAGNETAll.
func PredictCAGNETBatchAll(j Job, m *Machine, o Options) []Prediction {
	var out []Prediction
	for d := 1; d <= o.Ranks; d++ {
		if o.Ranks%d != 0 || o.D > 0 && d != o.D {
			continue
		}
		p := o.Ranks / d
		for c := 1; c <= p; c++ {
			if p%c == 0 {
				out = append(out, PredictCAGNETBatch(j, m, d, p, c, o.RanksPerNode, o.MemPerRank))
			}
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
