package perfmodel

import (
	"math"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/infer"
)

// Layer-wise evaluation (package infer; grappa.evaluation = "layerwise"):
// the workers split the vertices' row blocks; every layer transforms the
// rank's rows (T = H·W), all-gathers every vertex's T, and aggregates each
// row block from a strip of the adjacency read from the source.

// layerwiseWidths are the widths T has in each layer: a layer's output,
// a GAT layer's projection.
func (j Job) layerwiseWidths() []int {
	var w []int
	for _, s := range j.gcnConfig().LayerSpecs() {
		if s.Heads > 0 {
			w = append(w, s.ProjWidth)
		} else {
			w = append(w, s.Out)
		}
	}
	return w
}

// layerwiseEvalMemory is a rank's peak in a layer-wise evaluation on
// workers ranks over blocks row blocks: every vertex's T at the widest
// layer (the device adopts the host's copy; the rank's own rows are
// written in their place and gathered in place), the rank's activations between
// layers (a layer's input and output, in memory unless kept in files),
// one strip of the adjacency with the device's copy, a block of features,
// and a GAT strip's scores per head. In mixed precision a GCN or SAGE
// layer's T is bfloat16 only (infer's transformBF16: every vertex's, a
// halfword of padding a rank where a rank's rows can be an odd number of
// halfwords, and one block's rows in float32 before they are rounded).
func (j Job) layerwiseEvalMemory(workers, blocks int, files bool) Memory {
	n := float64(j.N)
	rows := n / float64(max(1, blocks))
	wT, wB, wH := 0, 0, 0
	widths := j.layerwiseWidths()
	for l, s := range j.gcnConfig().LayerSpecs() {
		if j.Precision == device.BF16 && s.Heads == 0 {
			wB = max(wB, widths[l])
		} else {
			wT = max(wT, widths[l])
		}
		if s.Hidden {
			wH = max(wH, s.Out)
		}
	}
	own := n / float64(max(1, workers))
	var mem Memory
	mem.Activations = int64(4 * float64(wT) * n)
	if wB > 0 {
		half := float64(wB) * n
		for r := range workers {
			if blocks < workers || blocks > j.N {
				half += float64(workers) // no such engine; at most a halfword a rank
				break
			}
			if lo, hi := infer.RankRows(j.N, blocks, workers, r); (hi-lo)*wB%2 == 1 {
				half++ // a halfword of padding
			}
		}
		mem.Activations += int64(2*half + 4*float64(wB)*rows)
	}
	if !files {
		mem.Activations += int64(2 * 4 * float64(wH) * own)
	}
	nnz := float64(j.NNZ) / float64(max(1, blocks))
	mem.Adjacency = 2 * int64(csrBytes(int(math.Round(rows)), nnz))
	if j.isGAT() {
		mem.Attention = int64(4 * nnz * float64(max(j.Heads, j.OutputHeads)))
	}
	mem.Features = int64(4*float64(max(j.Features, wH))*rows + 5*rows)
	return mem
}

// addLayerwiseEval adds weight times one layer-wise evaluation on workers
// ranks: the full graph's evaluation compute split over the ranks, one
// all-gather of every vertex's T a layer on link, and, when the graph is
// read from disk (out of core), the strips and features read cold
// (LayerwiseReadBytes).
func (pr *Prediction) addLayerwiseEval(j Job, m *Machine, workers int, link Link, weight float64) {
	one := grid.Shape{D: 1, X: 1, Y: 1, Z: 1}
	tr := EvalTrace(j.fullGraph(), one, Coords{}, Local{})
	pr.addKernels(m, j.Precision, tr.Kernels, weight/float64(workers))
	specs := j.gcnConfig().LayerSpecs()
	for l, w := range j.layerwiseWidths() {
		bytes := 4 // in mixed precision a GCN or SAGE layer's T moves as bfloat16
		if j.Precision == device.BF16 && specs[l].Heads == 0 {
			bytes = 2
		}
		c := Collective{Phase: PhaseForward, Name: "layerwise.T", Layer: l, Kind: collectives.KindAllGather, Group: GroupDP, Size: workers,
			Elems: int64(math.Ceil(float64(j.N) * float64(w) / float64(workers))), ElemBytes: bytes}
		if workers > 1 {
			pr.Comm += weight * CollectiveTime(c, link)
		}
	}
	if j.Isolated.OutOfCore {
		pr.Disk += weight * m.Disk.ReadTime(j.LayerwiseReadBytes(workers)/float64(workers))
	}
}

// LayerwiseReadBytes is what one out-of-core layer-wise evaluation reads
// from a prepared dataset with one block per chunk (C of them), summed
// over its workers: every layer reads every row's strip, which is the
// row's pointer in each of the C column blocks (8 bytes each: at R-MAT
// scale 25 with 64 blocks, 17.2 GB of the 25.8 GB a layer reads) and 8
// bytes a nonzero; the features and labels once. The strips the engine
// keeps between layers (its cache, a quarter of the memory left at
// setup) are read as if it kept none: a bound.
func (j Job) LayerwiseReadBytes(workers int) float64 {
	c := float64(j.isolatedChunks(workers))
	strips := 8*float64(j.N)*c + 8*float64(j.NNZ)
	return strips*float64(j.Layers) + (j.featureBytes()*float64(j.Features)+5)*float64(j.N)
}

// LayerwiseEvalBytes is what one layer-wise evaluation hands to
// collectives, summed over its workers ranks (the metrics' eval_bytes):
// every vertex's T once a layer, 4 bytes a value (in mixed precision a
// GCN or SAGE layer's 2, each rank's rows rounded up to whole float32
// words: infer's transformBF16), and every rank's accuracy sums (7
// float64 all-reduced); 0 on one rank.
func (j Job) LayerwiseEvalBytes(workers int) int64 {
	if workers <= 1 {
		return 0
	}
	specs := j.gcnConfig().LayerSpecs()
	chunks := j.isolatedChunks(workers)
	var b int64
	for l, w := range j.layerwiseWidths() {
		if j.Precision != device.BF16 || specs[l].Heads > 0 {
			b += 4 * int64(j.N) * int64(w)
			continue
		}
		for r := range workers {
			lo, hi := infer.RankRows(j.N, chunks, workers, r)
			b += 4 * int64(((hi-lo)*w+1)/2)
		}
	}
	return b + int64(workers)*7*8
}
