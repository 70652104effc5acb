package perfmodel

import (
	"slices"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
)

// Memory is the predicted peak memory of one rank, in bytes, by what holds
// it.
type Memory struct {
	// Adjacency: the rank's CSR shards of the normalised adjacency, one per
	// distinct layer layout (l mod 3, l mod 2) — three, up to six with four
	// or more layers — and their transposes where backward needs them; in
	// mini-batch training also the sampled shards of the current and the
	// prefetched step.
	Adjacency int64 `json:"adjacency"`
	// Features: the rank's block of the input features, labels and masks.
	Features int64 `json:"features"`
	// Activations: gcn's arenas, which hold every activation, gradient,
	// dropout mask, temporary and bfloat16 staging buffer of a pass — the
	// full-graph arena and, in mini-batch training, the batch arena —
	// counted as gcn's arena plan (gcn.Config.ArenaStep, ArenaEval) walks
	// them, growth factor included (see arenas).
	Activations int64 `json:"activations"`
	// Attention: a GAT layer's per-edge arrays (the shard block's
	// nonzeros × heads, float32): the scores overwritten by α, and in
	// training α with attention dropout and dα, per layer; in mini-batch
	// training the batch's and evaluation's α. The transposes' positions
	// (int32 per nonzero) count in Adjacency.
	Attention int64 `json:"attention,omitempty"`
	// Weights: parameter blocks with gradients and two optimizer moments.
	Weights int64 `json:"weights"`
	// CommBuffers: scratch for the largest all-reduce and the residual's
	// alltoallv send and receive buffers (the bfloat16 staging is in the
	// arenas).
	CommBuffers int64 `json:"comm_buffers"`
	// Dataset: the whole graph, which every rank reads before extracting
	// its shards unless the job loads sharded data (Job.ShardedLoad).
	Dataset int64 `json:"dataset"`
	// Staging: in mixed precision (Job.Precision bf16), the device's
	// bfloat16 copies of the products' operands (device.StagingBytes):
	// the largest first operand of a GEMM and the largest second operand
	// of a GEMM or SpMM, 2 bytes an element. Exact for 3D and 4D grids
	// (gcn's plan, EstimateMemory); a bound elsewhere (StagingBound).
	Staging int64 `json:"bf16_staging,omitempty"`
	// stagingKnown says Staging is the model's own count (gcn's plan,
	// exact; 1.5D's operand bound), which may be 0: a model that rounds
	// every operand itself stages nothing. StagingBound leaves it.
	stagingKnown bool
}

// Total returns the sum of the parts.
func (m Memory) Total() int64 {
	return m.Adjacency + m.Features + m.Activations + m.Attention + m.Weights + m.CommBuffers + m.Dataset + m.Staging
}

// StagingBound fills in m.Staging for a job in mixed precision whose
// model has no plan of its products (1.5D, neighbor sampling, isolated
// partitions and their evaluations): the two operands staged are
// distinct float32 buffers among the activations, the features and the
// weights (a quarter of Weights: gradients and moments are no operands),
// so their bfloat16 copies take at most half of those bytes. A Memory
// whose staging is already known (EstimateMemory's and CAGNETMemory's, 0
// included) is returned as is.
func (j Job) StagingBound(m Memory) Memory {
	if j.Precision == device.BF16 && m.Staging == 0 && !m.stagingKnown {
		m.Staging = (m.Activations + m.Features + m.Weights/4) / 2
	}
	return m
}

func csrBytes(rows int, nnz float64) int64 { return int64(8*(rows+1)) + int64(8*nnz) }

// permBytes is what a transposed shard adds beside its CSR in a GAT job:
// the int32 position in the shard of each of the transpose's entries
// (spmm.TransposePerm), through which SpMMHeads and EdgeSums read α and
// the logits' gradient.
func (j Job) permBytes(nnz float64) int64 {
	if !j.isGAT() {
		return 0
	}
	return int64(4 * nnz)
}

// EstimateMemory returns the peak memory of the rank at coordinates at
// (rank 0 holds the largest blocks).
func EstimateMemory(j Job, s grid.Shape, at Coords) Memory {
	var mem Memory
	full := newTracer(j, s, at, Local{}, false)
	keys, transposed := j.shardKeys()
	fullT := transposed
	if j.Mode != gcn.FullGraph {
		fullT = nil // gcn.NewEvalShards: batches get their own transposes
	}
	mem.Adjacency = adjacencyBytes(s, full, keys, fullT)
	step := newTracer(j, s, at, Local{}, true)
	if j.Mode == gcn.MiniBatch {
		for _, k := range keys {
			r, p := k.Axes()
			nnz := step.localNNZ(k.Layer(), r, p)
			per := csrBytes(step.rowsOf(r, k.RowOrder()), nnz)
			if transposed[k] {
				per += csrBytes(step.rowsOf(p, k.ColOrder()), nnz) + j.permBytes(nnz)
			}
			mem.Adjacency += 2 * per
		}
	}

	fcol := grid.Y
	if j.InputProjection {
		fcol = grid.Z
	}
	ra, _ := full.logitsAxes()
	mem.Features = j.heldFeatureBytes()*int64(full.rowsOf(grid.X, 1))*int64(full.width(j.Features, fcol)) + 7*int64(full.rowsOf(ra, grid.OutputOrder(j.Layers-1)))

	fullArena, batchArena := arenas(j, full, []*tracer{step})
	mem.Activations = fullArena.Bytes() + batchArena.Bytes()
	if j.Precision == device.BF16 {
		mem.Staging, mem.stagingKnown = staging(j, full, []*tracer{step}).Bytes(), true
	}
	if j.isGAT() {
		mem.Attention = j.gatEdgeBytes(step, true)
		if j.Mode == gcn.MiniBatch {
			mem.Attention += j.gatEdgeBytes(full, false)
		}
	}

	var params int64
	for _, pb := range step.params() {
		params += int64(pb.elems)
	}
	mem.Weights = 4 * 4 * params

	var largest, a2a int64
	for _, c := range append(StepTrace(j, s, at, Local{}).Comm, EvalTrace(j, s, at, Local{}).Comm...) {
		if c.Kind == collectives.KindAlltoallv { // send and receive buffers
			a2a = max(a2a, 2*4*c.Elems)
			continue
		}
		largest = max(largest, 4*c.Elems)
	}
	mem.CommBuffers = largest + a2a

	if !j.ShardedLoad {
		n := int64(j.N)
		raw := max(0, j.NNZ-n)
		// Raw adjacency (int32 columns), normalised CSR, features,
		// labels and masks, permutations.
		mem.Dataset = 8*(n+1) + 4*raw + csrBytes(j.N, float64(j.NNZ)) + 4*n*int64(j.Features) + 7*n + 16*n
	}
	return mem
}

// adjacencyBytes is what the full-graph shards keys take on the tracer's
// rank (gcn.NewShards): one CSR per distinct block (grid.Shape.SameBlock)
// and its transpose where transposed marks one of the keys sharing it
// (nil: none, gcn.NewEvalShards), unless the block is its own transpose
// (mirrored).
func adjacencyBytes(s grid.Shape, full *tracer, keys []grid.Shard, transposed map[grid.Shard]bool) int64 {
	var b int64
	for i, k := range keys {
		if slices.ContainsFunc(keys[:i], func(e grid.Shard) bool { return s.SameBlock(e, k) }) {
			continue // kept once; its transpose too
		}
		withT := transposed[k]
		for _, e := range keys[i+1:] {
			withT = withT || (s.SameBlock(k, e) && transposed[e])
		}
		withT = withT && !full.mirrored(k)
		r, p := k.Axes()
		nnz := full.localNNZ(k.Layer(), r, p)
		b += csrBytes(full.rowsOf(r, k.RowOrder()), nnz)
		if withT {
			b += csrBytes(full.rowsOf(p, k.ColOrder()), nnz) + full.j.permBytes(nnz)
		}
	}
	return b
}

// arenas returns the elements of gcn's full-graph and mini-batch arenas
// once training has run its steps, on the blocks of the tracers steps in
// turn, and an evaluation on the blocks of the tracer full (jobs
// evaluates at least after the last epoch), as gcn's Model.arenaPlan
// reserves them: the full graph's exactly the most a step or an
// evaluation takes in each pool; the mini-batches' grown by gcn's rule
// (gcn.ArenaUse.After) in turn. EstimateMemory passes one step: the graph's, or
// in mini-batch mode a batch whose blocks have the tracer's ceil(B/parts)
// rows — the expected block, which a batch's random blocks exceed by a
// few rows; the tests pass every step's exact blocks and get the model's
// arenas exactly.
func arenas(j Job, full *tracer, steps []*tracer) (fullArena, batchArena gcn.ArenaUse) {
	cfg := j.gcnConfig()
	run := j.runOptions()
	for _, step := range steps {
		if j.Mode == gcn.MiniBatch {
			batchArena = batchArena.After(cfg.ArenaStep(blockShape{step}, run))
		} else {
			fullArena = fullArena.Most(cfg.ArenaStep(blockShape{step}, run))
		}
	}
	// Training evaluates at least after its last epoch.
	fullArena = fullArena.Most(cfg.ArenaEval(blockShape{full}, run))
	return fullArena, batchArena
}

// mirrored reports whether the tracer's rank holds shard k of a GCN
// model on the diagonal (the same rows as columns, in the same order),
// where the block serves as its own transpose (gcn.NewShards).
func (t *tracer) mirrored(k grid.Shard) bool {
	r, p := k.Axes()
	return t.j.Layer == gcn.GCNLayer && t.size(r) == t.size(p) && t.at.of(r) == t.at.of(p) &&
		(t.j.Permutation != permute.Double || k.RowOrder() == k.ColOrder())
}

// staging is the mixed-precision staging after the passes arenas runs:
// the steps, then an evaluation.
func staging(j Job, full *tracer, steps []*tracer) gcn.Staging {
	cfg := j.gcnConfig()
	run := j.runOptions()
	var st gcn.Staging
	for _, step := range steps {
		st = st.After(cfg.StagingStep(blockShape{step}, run))
	}
	return st.After(cfg.StagingEval(blockShape{full}, run))
}

// runOptions are the model's run-time options that change its arenas:
// bfloat16 sums, mixed precision and one vertex order.
func (j Job) runOptions() gcn.Options {
	return gcn.Options{BF16: j.CommDType == collectives.BF16, Precision: j.Precision, Overlap: !j.NoOverlap,
		FeaturesBF16: gcn.FeaturesInBF16(j.Precision), SingleOrder: j.Permutation != permute.Double}
}

// heldFeatureBytes is the bytes of a feature held in memory, in a gcn
// model's shards and in a neighbor-mode rank's block (gcn.FeaturesInBF16);
// featureBytes is a feature's bytes where it is read from.
func (j Job) heldFeatureBytes() int64 {
	if gcn.FeaturesInBF16(j.Precision) {
		return 2
	}
	return 4
}

// blockShape shows gcn's arena plan a tracer's blocks.
type blockShape struct{ t *tracer }

var _ gcn.BlockShape = blockShape{}

func (b blockShape) Rows(a grid.Axis, order int) int { return b.t.rowsOf(a, order) }
func (b blockShape) Cols(w int, a grid.Axis) int     { return b.t.width(w, a) }
func (b blockShape) Size(a grid.Axis) int            { return b.t.size(a) }
