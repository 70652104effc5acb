package cagnet

import (
	"fmt"
	"time"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/sampler"
	"scalegnn/spmm"
)

// BatchOptions say which mini-batches a replica trains: ScaleGNN's uniform
// vertex samples, drawn exactly as gcn.BatchBuilder draws them for 4D, so
// that a 1.5D job and a 4D job with the same seed and replica count train
// on the same batches.
type BatchOptions struct {
	// Size is B, the vertices of a batch (train.batch_size or _ratio).
	Size int
	// Seed draws the samples (train.seed, as gcn.NewBatchBuilder's).
	Seed uint64
	// DP is the communicator of the replicas (grid.Grid.DP: rank d is
	// replica d, which draws group d's samples); nil means one replica.
	DP collectives.Comm
	// Prefetch builds the host half of step t+1's batch (the sample and
	// the extracted blocks) in a goroutine while step t trains
	// (train.prefetch, as 4D's sampler.Prefetcher); Close stops it.
	Prefetch bool
}

// MiniBatch is 1.5D mini-batch training with data-parallel replicas
// (issue 17's "1.5D with Gd replicas"): every replica of P ranks draws its
// batch from (seed, replica, step) like 4D, cuts the batch's block rows of
// Â and Âᵀ out of its stages' full blocks with sampler.Extractor (the one
// rule of gcn.BatchBuilder: rows and columns of the sample, off-diagonal
// values divided by p = (B−1)/(N−1)), and trains the induced subgraph with
// the 1.5D algorithm: block row i of the batch is the sample's members of
// the full graph's block row i, so the blocks are uneven, as 4D's, and no
// message is needed to build them. The weight gradients are then summed
// over the replicas and divided by their count (gcn's data-parallel rule)
// before the optimizer step. Evaluation (Accuracy) is the full-graph 1.5D
// forward pass.
//
// Buffers are sized once for the largest block row (the full graph's), so
// a steady step allocates nothing once the extracted blocks have held
// their largest batch.
type MiniBatch struct {
	*Model
	dp    collectives.Comm
	group int
	seed  uint64
	size  int
	p     float64

	full, batch graphView
	// order[i] is the vertex at full-graph position i, inv its inverse;
	// train the whole training mask, by position.
	order, inv []int32
	train      []bool
	// ex and exT cut the batch's Â_ik and (Âᵀ)_ik out of the full blocks
	// of this rank's stages k, for one hostBatch at a time (the
	// prefetcher builds them in order); draw is the sampler's state.
	ex, exT []*sampler.Extractor
	draw    sampler.UniformScratch
	// pre hands out the host halves of consecutive steps' batches (made
	// at the first step, which it starts from).
	pre        *sampler.Prefetcher[*hostBatch]
	prefetch   bool
	wait, took time.Duration
	// The device half: dA, dAT the batch blocks (refilled in place), idx
	// the rows of the batch in the full block row, xb the batch's
	// features, vb its vertex ids.
	dA, dAT []*device.CSR
	// gA, gAT, gPerm and gVerts are a GAT model's merged batch block, its
	// transpose, the transpose's entry positions and the stages' vertex
	// ids (gatBlock), refilled in place.
	gA, gAT       *device.CSR
	gPerm, gVerts device.Buffer[int32]
	idx           device.Buffer[int32]
	xb            device.Buffer[float32]
	xbb           device.Buffer[uint16] // xb in bfloat16, for features in bfloat16
	vb            device.Buffer[int32]
	grads         device.Buffer[float32]
	dpScale       float32
}

// hostBatch is the host half of one step's batch, which buildHost makes
// without touching the device or the model (so in the prefetcher's
// goroutine while a step trains): the sample by full-graph position and
// vertex id, the first position of each block row, this rank's extracted
// blocks, its rows' places in the full block row, and the labels and
// training mask by batch position (this block row's filled).
type hostBatch struct {
	step             int
	sample, pos, ids []int32
	bounds           []int
	hA, hAT          []*spmm.CSR
	// gat and gatT are a GAT model's stage blocks merged (gatBlock) and
	// their transpose, perm the transpose's entry positions.
	gat, gatT *spmm.CSR
	perm      []int32
	offs      []int
	idx       []int32
	labels    []int32
	train     []bool
	nTrain    int
}

// graphView is what a Model trains or evaluates on: the full graph's
// block row or a mini-batch's.
type graphView struct {
	n, lo, hi, nTrain int
	bounds            []int
	a, at             []*device.CSR
	gv                gatBlock
	x                 device.Mat
	xb                device.MatBF16 // instead of x, for features in bfloat16
	verts             device.Buffer[int32]
	labels            []int32
	train, val, test  []bool
}

func (m *Model) view() graphView {
	return graphView{n: m.n, lo: m.lo, hi: m.hi, nTrain: m.nTrain, bounds: m.bounds, a: m.a, at: m.at, gv: m.gv, x: m.x, xb: m.xb,
		verts: m.verts, labels: m.labels, train: m.train, val: m.val, test: m.test}
}

func (m *Model) bind(v *graphView) {
	m.n, m.lo, m.hi, m.nTrain, m.bounds = v.n, v.lo, v.hi, v.nTrain, v.bounds
	m.a, m.at, m.gv, m.x, m.xb, m.verts = v.a, v.at, v.gv, v.x, v.xb, v.verts
	m.labels, m.train, m.val, m.test = v.labels, v.train, v.val, v.test
}

// NewMiniBatch builds this rank's share of 1.5D mini-batch training from
// src: NewFromSource over replica (the P ranks of this rank's replica,
// grid.Grid.Cube), for evaluation and the parameters, and the batch
// machinery of bo: the full blocks of this rank's stages on the host (read
// as NewFromSource reads them, gcn.ReadBlock), and src's training mask,
// which every rank holds whole so that a batch's count of training
// vertices, the loss's divisor, needs no message (collective over
// replica).
func NewMiniBatch(replica collectives.Comm, dev device.Device, o Options, bo BatchOptions, cfg gcn.Config, opt gcn.Optimizer, src gcn.Source) (*MiniBatch, error) {
	n := src.Sizes().N
	if bo.Size < 1 || bo.Size > n {
		return nil, fmt.Errorf("cagnet: batch size %d is outside [1, %d], the number of vertices: set train.batch_size or batch_ratio within it", bo.Size, n)
	}
	m, err := NewFromSource(replica, dev, o, cfg, opt, src)
	if err != nil {
		return nil, err
	}
	b := &MiniBatch{Model: m, dp: bo.DP, seed: bo.Seed, size: bo.Size, p: sampler.InclusionProbability(n, bo.Size)}
	if b.dp != nil {
		b.group = b.dp.Rank()
	}
	b.order = src.Orders().Order[0]
	b.inv = make([]int32, n)
	for i, v := range b.order {
		b.inv[v] = int32(i)
	}
	err = b.readStages(src)
	if err := collectives.AgreeError(replica, err); err != nil {
		return nil, err
	}
	l := m.L
	// Every buffer holds the largest block row (a batch's block row is a
	// subset of the full graph's), so evaluation and batches share them.
	m.rowsCap = (n + l.Q - 1) / l.Q
	rows := m.hi - m.lo
	b.prefetch = bo.Prefetch
	b.idx, b.vb = device.Alloc[int32](dev, rows), device.Alloc[int32](dev, rows)
	if m.featB {
		b.xbb = device.Alloc[uint16](dev, rows*cfg.Features)
	} else {
		b.xb = device.Alloc[float32](dev, rows*cfg.Features)
	}
	b.full = m.view()
	if m.isGAT() {
		b.gA, b.gAT = new(device.CSR), new(device.CSR)
		b.gPerm, b.gVerts = device.Alloc[int32](dev, m.edgeCap), device.Alloc[int32](dev, m.rangeCap)
	}
	// The gradients in one buffer, for one all-reduce over the replicas
	// (as gcn's m.grads): each parameter's dg becomes a view into it.
	total := 0
	for _, p := range m.Params {
		total += p.Rows * p.Cols
	}
	b.grads = device.Alloc[float32](dev, total)
	off := 0
	for _, p := range m.Params {
		p.dg = device.Matrix(b.grads.Slice(off, off+p.Rows*p.Cols), p.Rows, p.Cols)
		off += p.Rows * p.Cols
	}
	if b.dp != nil {
		b.dpScale = 1 / float32(b.dp.Size())
	}
	return b, nil
}

// readStages reads the host blocks the extractors cut batches from: for
// each stage k, Â_ik and (Âᵀ)_ik as readLocal reads them, and the whole
// training mask.
func (b *MiniBatch) readStages(src gcn.Source) error {
	m, l := b.Model, b.L
	k0, k1 := l.Stages()
	for k := k0; k < k1; k++ {
		c0, _ := l.Rows(m.n, k)
		a, at, err := m.readStage(src, k)
		if err != nil {
			return err
		}
		b.ex = append(b.ex, sampler.NewExtractor(a, m.lo, c0))
		if m.isGAT() {
			continue // a GAT layer transposes its merged batch block
		}
		b.exT = append(b.exT, sampler.NewExtractor(at, m.lo, c0))
		b.dA, b.dAT = append(b.dA, new(device.CSR)), append(b.dAT, new(device.CSR))
	}
	_, train, _, _, err := src.Labels(0, 0, m.n)
	b.train = train
	return err
}

// LossAndGrad trains on step's mini-batch: it builds the batch, runs the
// 1.5D forward and backward pass on it and leaves in Param.G the
// gradient averaged over the replicas; it returns this replica's batch
// loss. step must be the optimizer steps taken so far (the dropout masks
// are keyed by it, as 4D's by its step).
func (b *MiniBatch) LossAndGrad(step int) (float64, error) {
	if step != b.t {
		panic(fmt.Sprintf("cagnet: MiniBatch.LossAndGrad of step %d after %d optimizer steps: the dropout masks and the sample follow the step", step, b.t))
	}
	if b.pre == nil {
		b.pre = sampler.NewPrefetcher(b.newHost, b.buildHost, step, b.prefetch)
	}
	hb, wait, took, err := b.pre.Next()
	if err != nil {
		return 0, err
	}
	b.wait, b.took = b.wait+wait, b.took+took
	if hb.step != step {
		panic(fmt.Sprintf("cagnet: MiniBatch's batch of step %d handed out at step %d: steps must follow one another", hb.step, step))
	}
	b.bindBatch(hb)
	b.bind(&b.batch)
	loss, err := b.Model.LossAndGrad()
	b.bind(&b.full)
	// The step has read the batch (the device shares its host arrays on
	// host devices until now): the prefetcher may build into it again.
	b.pre.Release(hb)
	if err != nil {
		return 0, err
	}
	if b.dp == nil || b.dp.Size() == 1 {
		return loss, nil
	}
	if err := device.AllReduce(b.dev, b.dp, b.grads, collectives.Sum); err != nil {
		return 0, err
	}
	all := device.Matrix(b.grads, 1, b.grads.Len())
	b.dev.Scale(all, b.dpScale, all)
	for _, p := range b.Params {
		p.download(b.dev)
	}
	return loss, nil
}

// Accuracy is the full graph's (Model.Accuracy): evaluation does not sample.
func (b *MiniBatch) Accuracy() ([3]float64, error) { return b.Model.Accuracy() }

// DP returns the replicas' communicator (nil for one replica), whose
// counters hold the gradient all-reduce's bytes.
func (b *MiniBatch) DP() collectives.Comm { return b.dp }

// SampleTimes returns the time the steps so far waited for their batches'
// host halves and the time building them took (with prefetching, the
// difference was hidden behind training), as 4D's sample_wait_s and
// sample_s report them.
func (b *MiniBatch) SampleTimes() (wait, took time.Duration) { return b.wait, b.took }

// Close stops the prefetching goroutine, if any.
func (b *MiniBatch) Close() {
	if b.pre != nil {
		b.pre.Close()
	}
}

// newHost returns storage for a batch's host half, sized for the largest
// (B vertices; this rank's whole block row).
func (b *MiniBatch) newHost() *hostBatch {
	size, rows := b.size, b.full.hi-b.full.lo
	h := &hostBatch{sample: make([]int32, size), pos: make([]int32, size), ids: make([]int32, size),
		bounds: make([]int, b.L.Q+1), idx: make([]int32, rows), labels: make([]int32, size), train: make([]bool, size)}
	for range b.ex {
		h.hA = append(h.hA, new(spmm.CSR))
	}
	for range b.exT {
		h.hAT = append(h.hAT, new(spmm.CSR))
	}
	if b.isGAT() {
		h.gat, h.gatT, h.offs = new(spmm.CSR), new(spmm.CSR), make([]int, len(b.ex))
	}
	return h
}

// buildHost draws step's sample and builds its host half into h: the
// blocks of this rank's stages, its rows' places in the full block row,
// and the batch's labels, training mask and count of training vertices
// (every rank holds the whole sample and the whole training mask).
func (b *MiniBatch) buildHost(step int, h *hostBatch) error {
	l, n := b.L, b.full.n
	h.step = step
	verts := sampler.UniformInto(h.sample, &b.draw, b.seed, b.group, step, n, b.size)
	pos := sampler.PositionsInto(h.pos, verts, b.inv)
	for j, p := range pos {
		h.ids[j] = b.order[p]
	}
	bounds := sampler.BoundsInto(h.bounds, pos, l.Q, func(i int) (int, int) { return l.Rows(n, i) })
	r0, r1 := bounds[l.Row], bounds[l.Row+1]
	rows, rowIDs := pos[r0:r1], h.ids[r0:r1]
	k0, _ := l.Stages()
	for s := range b.ex {
		c0, c1 := bounds[k0+s], bounds[k0+s+1]
		cols, colIDs := pos[c0:c1], h.ids[c0:c1]
		b.ex[s].ExtractInto(h.hA[s], nil, rows, cols, rowIDs, colIDs, b.p)
		if s < len(b.exT) {
			b.exT[s].ExtractInto(h.hAT[s], nil, rows, cols, rowIDs, colIDs, b.p)
		}
	}
	if b.isGAT() {
		c0, c1 := bounds[k0], bounds[k0+len(b.ex)]
		for s := range h.offs {
			h.offs[s] = bounds[k0+s] - c0
		}
		mergeColumns(h.gat, h.hA, h.offs, r1-r0, c1-c0)
		h.perm = transposeInto(h.gatT, h.perm, h.gat)
	}
	for j, p := range rows {
		h.idx[j] = p - int32(b.full.lo)
	}
	// The loss divides by the batch's training vertices, all of them.
	h.nTrain = 0
	for _, p := range pos {
		if b.train[p] {
			h.nTrain++
		}
	}
	// Labels and masks are indexed by position (in the batch: r0, r1);
	// this block row's are filled, as the full graph's (readLocal).
	for j := r0; j < r1; j++ {
		p := pos[j]
		h.labels[j], h.train[j] = b.full.labels[p], b.full.train[p]
	}
	return nil
}

// bindBatch makes h's device half and the batch view: the blocks
// uploaded in place, the block row's features gathered from the full
// graph's on the device, its vertex ids uploaded.
func (b *MiniBatch) bindBatch(h *hostBatch) {
	l, f := b.L, b.cfg.Features
	r0, r1 := h.bounds[l.Row], h.bounds[l.Row+1]
	r := r1 - r0
	for s := range b.dA {
		b.dev.UploadCSRInto(b.dA[s], h.hA[s])
		b.dev.UploadCSRInto(b.dAT[s], h.hAT[s])
	}
	idx := b.idx.Slice(0, r)
	device.Upload(b.dev, idx, 0, h.idx[:r])
	var x device.Mat
	var xb device.MatBF16
	if b.featB {
		xb = device.MatrixBF16(b.xbb.Slice(0, r*f), r, f)
		b.dev.GatherRowsBF16(xb, b.full.xb, idx)
	} else {
		x = device.Matrix(b.xb.Slice(0, r*f), r, f)
		b.dev.GatherRows(x, b.full.x, idx)
	}
	vb := b.vb.Slice(0, r)
	device.Upload(b.dev, vb, 0, h.ids[r0:r1])
	b.batch = graphView{n: len(h.pos), lo: r0, hi: r1, nTrain: h.nTrain, bounds: h.bounds, a: b.dA, at: b.dAT,
		x: x, xb: xb, verts: vb, labels: h.labels, train: h.train}
	if b.isGAT() {
		k0, _ := l.Stages()
		c0, c1 := h.bounds[k0], h.bounds[k0+len(b.ex)]
		b.dev.UploadCSRInto(b.gA, h.gat)
		b.dev.UploadCSRInto(b.gAT, h.gatT)
		nnz := h.gat.NNZ()
		perm, verts := b.gPerm.Slice(0, nnz), b.gVerts.Slice(0, c1-c0)
		device.Upload(b.dev, perm, 0, h.perm)
		device.Upload(b.dev, verts, 0, h.ids[c0:c1])
		b.batch.gv = gatBlock{a: b.gA, at: b.gAT, perm: perm, colVerts: verts, c0: c0, c1: c1, nnz: nnz}
	}
}
