package perfmodel

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grappa"
	"scalegnn/grid"
	"scalegnn/method"
)

// IsolatedJob is what the model needs to know about a train.mode =
// "isolated" job (Grappa, package grappa) beyond Job: every rank is a
// worker that trains a partition (two of Chunks chunks, with or without
// the k-hop halo of its training vertices) alone on a 1×1×1 grid and
// all-reduces its gradient once per step; with more partitions than
// workers, the workers train them in phases (grappa.Phases).
type IsolatedJob struct {
	// Partitions is P (grappa.partitions), trained by the workers in
	// P/workers phases an epoch; 0 means one per worker.
	Partitions int
	// Chunks is the number of chunks; 0 means one per partition.
	Chunks int
	// Halo: partitions hold the k-hop closure of their training vertices
	// (grappa.partition = "halo"); otherwise the two chunks' induced
	// subgraph.
	Halo bool
	// BatchSize is the training vertices of a step (train.batch_size);
	// 0 trains the whole partition in one step per epoch.
	BatchSize int
	// StepsPerEpoch with BatchSize > 0; 0 means enough batches to cover a
	// partition's training vertices once.
	StepsPerEpoch int
	// EpochsPerSuperEpoch is how many epochs a partition trains (0: 1).
	EpochsPerSuperEpoch int
	// TrainVertices is the size of the training set; 0 takes
	// Neighbor.TrainVertices.
	TrainVertices int
	// BuildNNZ is the seconds a worker spends cutting a step's subgraph
	// from the graph (gcn.BatchBuilder, on the critical path: the batch's
	// factor is set as it is built) per nonzero of its rows in the whole
	// graph, which the extraction walks; 0 takes DefaultIsolatedBuildNNZ.
	BuildNNZ float64
	// EvalShape is the 3D grid (d = 1, all the workers) of the
	// distributed evaluation (grappa.eval_grid); the zero Shape takes
	// IsolatedEvalShape's rule.
	EvalShape grid.Shape
	// OutOfCore: a worker reads each partition's blocks from the dataset
	// as it loads it and holds no whole graph (grappa.out_of_core); the
	// reads cost disk time (Machine.Disk), and one worker evaluates on its
	// own 1×1×1 evaluation model.
	OutOfCore bool
	// Layerwise: the evaluation is layer by layer over Chunks row blocks
	// (grappa.evaluation = "layerwise", package infer), its activations
	// between layers in files when EvalFiles.
	Layerwise, EvalFiles bool
}

// DefaultIsolatedBuildNNZ is the build time per walked nonzero measured
// on the development machine: bench/isolated-vs-4d.sh at R-MAT scale 16,
// 8 ranks sharing 2 busy cores, 0.29–0.34 s per epoch (sample_s) for an
// induced partition of 16,384 rows with 471K nonzeros in the graph.
// Machines differ; a job's own metrics give its value.
const DefaultIsolatedBuildNNZ = 640e-9

// IsolatedGrid formats the isolated mode's arrangement of partitions on
// workers as predictions list it.
func IsolatedGrid(workers, partitions int) string {
	if partitions > workers {
		return fmt.Sprintf("isolated %d workers, %d partitions", workers, partitions)
	}
	return fmt.Sprintf("isolated %d workers", workers)
}

// isolatedPartitions is the resolved partition count for workers workers.
func (j Job) isolatedPartitions(workers int) int {
	if j.Isolated.Partitions > 0 {
		return j.Isolated.Partitions
	}
	return workers
}

// isolatedPhases is the phases of an epoch on workers workers.
func (j Job) isolatedPhases(workers int) int {
	return max(1, j.isolatedPartitions(workers)/max(1, workers))
}

// chunks is the resolved chunk count for workers workers.
func (j Job) isolatedChunks(workers int) int {
	if j.Isolated.Chunks > 0 {
		return j.Isolated.Chunks
	}
	return j.isolatedPartitions(workers)
}

func (j Job) isolatedTrain() int {
	if j.Isolated.TrainVertices > 0 {
		return j.Isolated.TrainVertices
	}
	return j.Neighbor.TrainVertices
}

// IsolatedSteps is the steps of one epoch: grappa.StepsPerEpoch's steps
// of a phase times the phases.
func (j Job) IsolatedSteps(workers int) int {
	return j.isolatedPhases(workers) * grappa.StepsPerEpoch(j.isolatedTrain(), j.isolatedChunks(workers), j.Isolated.BatchSize, j.Isolated.StepsPerEpoch)
}

// IsolatedSize is the expected size of one step's subgraph on workers
// workers: its vertices and the nonzeros of its Â (self loops included).
//
// A partition holds a fraction f = 2/C of the vertices (1 with one
// chunk). Induced: f·N vertices, and an edge survives when both ends are
// in, so f²·(NNZ − N) off-diagonal nonzeros. Halo: the chunks plus the
// k-hop ball of the f·T training vertices; the ball's size is a mean field
// over degree classes (ball, the frontier's edge ends hitting a vertex of
// degree k with probability 1 − exp(−E·k/2M)), and the ball's vertices
// outside the chunks, a share 1 − f, are added. Its nonzeros: the ball
// within k − 1 hops (I) keeps every edge, 2·E_I − E_I²/2M entries counting
// both directions once, and the rest of the vertices keep an edge when
// both ends are in, as a random set would. A batch (BatchSize > 0) is the
// ball of its B vertices inside the partition: inside a chunk pair for
// induced partitions (degrees thinned by f), the whole graph's for halo.
func (j Job) IsolatedSize(workers int) (verts, nnz float64) {
	n := float64(j.N)
	off := math.Max(0, float64(j.NNZ)-n)
	f := 1.0
	if c := j.isolatedChunks(workers); c > 1 {
		f = math.Min(1, 2/float64(c))
	}
	seeds := f * float64(j.isolatedTrain())
	hops := j.Layers
	if b := j.Isolated.BatchSize; b > 0 {
		seeds = math.Min(float64(b), seeds)
		keep := 1.0
		if !j.Isolated.Halo {
			keep = f
		}
		inner, ball, eInner := ballOf(j.degrees(), seeds, hops, keep)
		nnz = 2*eInner - eInner*eInner/(off*keep*keep) + off*keep*keep*sq((ball-inner)/(keep*n))
		return ball, math.Min(nnz, off*keep*keep) + ball
	}
	if !j.Isolated.Halo {
		return f * n, f*f*off + f*n
	}
	inner, ball, eInner := ballOf(j.degrees(), seeds, hops, 1)
	verts = math.Min(n, f*n+(1-f)*(ball-seeds))
	nnz = 2*eInner - eInner*eInner/off + off*sq((verts-inner)/n)
	return verts, math.Min(nnz, off) + verts
}

func sq(x float64) float64 { return x * x }

// ballOf is the mean-field k-hop ball of seeds vertices drawn uniformly
// from a domain holding a share keep of every degree class of histogram h
// (whose vertices keep a share keep of their edges): the ball within
// hops − 1 hops (inner) and its edge ends (eInner), and the whole ball.
func ballOf(h []float64, seeds float64, hops int, keep float64) (inner, ball, eInner float64) {
	var n, twoM float64
	for k, c := range h {
		n += c
		twoM += float64(k) * c
	}
	if n == 0 || twoM == 0 {
		return seeds, seeds, 0
	}
	cnt := make([]float64, len(h))
	front := make([]float64, len(h))
	for k, c := range h {
		cnt[k] = seeds * c / n
		front[k] = cnt[k]
	}
	for hop := range hops {
		var e float64
		for k, c := range front {
			e += c * float64(k) * keep
		}
		if hop == hops-1 {
			for k, c := range cnt {
				inner += c
				eInner += c * float64(k) * keep
			}
		}
		for k, c := range h {
			pi := -math.Expm1(-e * float64(k) / (twoM * keep))
			add := (keep*c - cnt[k]) * pi
			front[k] = math.Max(0, add)
			cnt[k] += front[k]
		}
	}
	for _, c := range cnt {
		ball += c
	}
	return inner, ball, eInner
}

// partitionJob is one step's subgraph as a full-graph job on one rank:
// its trace is the worker's local compute.
func (j Job) partitionJob(workers int) Job {
	v, nnz := j.IsolatedSize(workers)
	p := j
	p.Mode, p.N, p.NNZ, p.EvalEvery, p.Imbalance, p.BatchSize, p.StepsPerEpoch = gcn.FullGraph, max(1, int(math.Round(v))), int64(math.Round(nnz)), 0, 0, 0, 0
	return p
}

// IsolatedParams is the length of the gradient all-reduce: every
// parameter of the model (gcn.Model's gradient buffer).
func (j Job) IsolatedParams() int {
	t := newTracer(j, grid.Shape{D: 1, X: 1, Y: 1, Z: 1}, Coords{}, Local{}, true)
	n := 0
	for _, pb := range t.params() {
		n += pb.elems
	}
	return n
}

// IsolatedStepTrace is one worker's training step: forward, loss and
// backward on its step subgraph (a one-rank full-graph step of
// partitionJob), the coverage factor's scale, the gradient all-reduce over
// the workers and its average, and the optimizer.
func (j Job) IsolatedStepTrace(workers int) Trace {
	tr := StepTrace(j.partitionJob(workers), grid.Shape{D: 1, X: 1, Y: 1, Z: 1}, Coords{}, Local{})
	p := j.IsolatedParams()
	tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseDP, Kind: KernelElementwise, Name: "grappa.scale", Layer: -1, Elems: 2 * float64(p)})
	if workers > 1 {
		tr.Comm = append(tr.Comm, Collective{Phase: PhaseDP, Name: "dp.grads", Layer: -1, Kind: collectives.KindAllReduce,
			Group: GroupDP, Size: workers, Elems: int64(p), ElemBytes: 4})
		tr.Kernels = append(tr.Kernels, Kernel{Phase: PhaseDP, Kind: KernelElementwise, Name: "dp.scale", Layer: -1, Elems: 2 * float64(p)})
	}
	return tr
}

// IsolatedChunkBytes is what one chunk load reads (grappa.ChunkReadBytes)
// for a chunk of the expected N/C rows and NNZ/C nonzeros.
func (j Job) IsolatedChunkBytes(workers int) int64 {
	c := float64(j.isolatedChunks(workers))
	return int64(math.Round(grappa.ChunkReadBytes(float64(j.N)/c, float64(j.NNZ)/c, j.Features)))
}

// IsolatedMemory is a worker's peak memory: the whole graph's one-rank
// shards (partitions are cut from them) and weights, the step subgraph's
// shards and arena (partitionJob's, weights counted once), the graph's
// structure and split in vertex ids, the partition being prefetched, and
// the evaluation: with one worker, a full-graph evaluation on its own
// grid; with more, the evaluation model's part of the evaluation grid
// (isolatedEvalMemory), the worker's own full-graph arena staying empty.
func (j Job) IsolatedMemory(workers int) Memory {
	return j.isolatedMemory(workers, j.IsolatedEvalShape(workers))
}

// isolatedMemory is IsolatedMemory with the evaluation grid es already
// chosen (PredictIsolated chooses it once for time and memory).
func (j Job) isolatedMemory(workers int, es grid.Shape) Memory {
	one := grid.Shape{D: 1, X: 1, Y: 1, Z: 1}
	if j.Isolated.OutOfCore {
		return j.outOfCoreMemory(workers, es)
	}
	f := j.fullGraph()
	// mem.Staging is the whole graph's: its evaluation on one worker.
	mem := EstimateMemory(f, one, Coords{})
	keys, _ := f.shardKeys()
	mem.Adjacency = adjacencyBytes(one, newTracer(f, one, Coords{}, Local{}, false), keys, nil) // gcn.NewEvalShards
	pm := EstimateMemory(j.partitionJob(workers), one, Coords{})
	v, _ := j.IsolatedSize(workers)
	mem.Adjacency += pm.Adjacency + csrBytes(j.N, float64(j.NNZ))
	mem.Features += pm.Features + int64(j.N)
	if j.Isolated.Layerwise {
		// The worker's own full-graph arena stays empty; the engine's
		// memory comes on top.
		mem.Activations = pm.Activations + int64(2*4*v)
		mem.Attention = pm.Attention
		mem.Staging = pm.Staging
		mem.addEvaluation(j.StagingBound(j.layerwiseEvalMemory(workers, j.isolatedChunks(workers), j.Isolated.EvalFiles)))
		return mem
	}
	if workers <= 1 {
		mem.Activations += pm.Activations + int64(2*4*v)
		mem.Attention += pm.Attention
		mem.Staging += pm.Staging // see addEvaluation
		return mem
	}
	mem.Activations = pm.Activations + int64(2*4*v)
	mem.Attention = pm.Attention
	mem.Staging = pm.Staging
	ev := j.isolatedEvalMemory(es)
	mem.addEvaluation(ev)
	return mem
}

// PredictIsolated predicts the isolated mode on workers ranks: the step
// trace times the steps of an epoch, the step subgraph's build on the
// critical path, the full-graph evaluation on the evaluation grid
// (IsolatedEvalShape) spread over EvalEvery epochs, and the repartitions:
// the next partition is built while the current one trains, so only a
// build longer than what it overlaps shows: the super-epoch with one
// partition per worker, a phase with several (each phase builds one). CommBytes is the gradient all-reduce's bytes; the
// evaluation's are IsolatedEvalBytes, and chunk loads are reads, not
// collectives (IsolatedChunkBytes per load).
func PredictIsolated(j Job, m *Machine, workers, ranksPerNode int, memPerRank int64) (Prediction, error) {
	if err := j.Validate(); err != nil {
		return Prediction{}, err
	}
	if workers < 1 || j.isolatedTrain() < 1 {
		return Prediction{}, fmt.Errorf("perfmodel: isolated job on %d workers with %d training vertices: need at least one of each", workers, j.isolatedTrain())
	}
	parts := j.isolatedPartitions(workers)
	if parts%workers != 0 {
		return Prediction{}, fmt.Errorf("perfmodel: isolated job with %d partitions on %d workers: expected a multiple of the workers", parts, workers)
	}
	if c := j.Isolated.Chunks; c != 0 && c < parts {
		return Prediction{}, fmt.Errorf("perfmodel: isolated job with %d chunks for %d partitions: expected 0 or at least one chunk per partition", c, parts)
	}
	if j.Isolated.Partitions == 0 {
		// Unset: the fewest partitions that fit, as the launcher
		// chooses them (plan.ResolvePartitions).
		if p, ok := j.IsolatedPartitionsFor(workers, memPerRank); ok {
			j.Isolated.Partitions, parts = p, p
		}
	}
	pr := Prediction{Algorithm: method.IsolatedPartitions, Grid: IsolatedGrid(workers, parts), Shape: grid.Shape{D: workers, X: 1, Y: 1, Z: 1}}
	link := m.Links(pr.Shape, ranksPerNode)[GroupDP]
	steps := float64(j.IsolatedSteps(workers))
	var step Prediction
	addTrace(&step, j.IsolatedStepTrace(workers), link, m, j.Precision)
	build := j.Isolated.BuildNNZ
	if build == 0 {
		build = DefaultIsolatedBuildNNZ
	}
	verts, _ := j.IsolatedSize(workers)
	walked := verts * float64(j.NNZ) / float64(j.N) // the rows' nonzeros in the graph
	pr.Comm, pr.SpMM, pr.GEMM = steps*step.Comm, steps*step.SpMM, steps*step.GEMM
	pr.Other = steps * (step.Other + build*walked)
	if j.Isolated.OutOfCore {
		// A partition read from the dataset is a step's batch as it is:
		// nothing is cut from a whole graph on the critical path (its
		// reading and assembly run in the prefetch: the disk term).
		pr.Other = steps * step.Other
	}
	pr.CommBytes = int64(steps) * step.CommBytes
	train := pr.Comm + pr.SpMM + pr.GEMM + pr.Other
	es := j.IsolatedEvalShape(workers)
	if j.EvalEvery > 0 {
		// The evaluation grid's forward pass (one rank's on one worker),
		// or the layer-wise one; its bytes are evaluation's, not in
		// CommBytes.
		var ev Prediction
		if j.Isolated.Layerwise {
			ev.addLayerwiseEval(j, m, workers, link, 1/float64(j.EvalEvery))
			pr.Disk += ev.Disk
		} else {
			ev.addEval(j.fullGraph(), m, es, m.Links(es, ranksPerNode), 1/float64(j.EvalEvery))
		}
		pr.Comm += ev.Comm
		pr.SpMM += ev.SpMM
		pr.GEMM += ev.GEMM
		pr.Other += ev.Other
	}
	eps := float64(max(1, j.Isolated.EpochsPerSuperEpoch))
	if j.Isolated.OutOfCore {
		// Each load reads its partition while the one before trains
		// (the loader's prefetch): a phase's read overlaps the phase
		// before, one partition per worker's the super-epoch; only an
		// excess shows.
		read := m.Disk.ReadTime(j.OutOfCoreReadBytes(workers))
		switch ph := float64(j.isolatedPhases(workers)); {
		case ph > 1:
			pr.Disk += ph * math.Max(0, read-train/ph)
		case j.isolatedChunks(workers) > 1:
			pr.Disk += math.Max(0, read-eps*train) / eps
		}
	} else if j.isolatedChunks(workers) > 1 {
		// The next partition's build (a walk of its rows, like a step's
		// extraction) overlaps the super-epoch, or with phases the
		// phase; only an excess shows.
		part := 2 * float64(j.NNZ) / float64(j.isolatedChunks(workers))
		if ph := float64(j.isolatedPhases(workers)); ph > 1 {
			pr.Other += ph * math.Max(0, build*part-train/ph)
		} else {
			pr.Other += math.Max(0, build*part-eps*train) / eps
		}
	}
	pr.finish(j, j.isolatedMemory(workers, es), memPerRank)
	return pr, nil
}

// addEvaluation adds an evaluation's memory to a worker's: the
// evaluation model's (or engine's) blocks, arena and weights on top of
// training's, the communication buffers shared. The device's one
// mixed-precision staging grows to the larger of the two needs for each
// operand; their sum bounds it.
func (m *Memory) addEvaluation(ev Memory) {
	m.Adjacency += ev.Adjacency
	m.Features += ev.Features
	m.Activations += ev.Activations
	m.Attention += ev.Attention
	m.Weights += ev.Weights
	m.CommBuffers = max(m.CommBuffers, ev.CommBuffers)
	m.Staging += ev.Staging
}

// outOfCoreMemory is an out-of-core worker's peak: the step's subgraph
// as a one-rank full-graph job (partitionJob: its shards, arena and
// weights), its shards three times over (the partition the model was
// built on, the one training and the one being read), the O(N) vertex
// arrays (the orders and their inverses, the labels, the split and the
// chunk map: 23 bytes a vertex), and the evaluation model: on one worker
// its own on the 1×1×1 grid, the whole graph's; on several, its part of
// the evaluation grid es.
func (j Job) outOfCoreMemory(workers int, es grid.Shape) Memory {
	one := grid.Shape{D: 1, X: 1, Y: 1, Z: 1}
	mem := EstimateMemory(j.partitionJob(workers), one, Coords{})
	mem.Adjacency *= 3
	// In mixed precision the partition being read holds its float32
	// features until they are rounded: 4 + 2 bytes each beside the other
	// two partitions' 2 (a bound: the labels' bytes are scaled alike).
	copies := int64(3)
	if gcn.FeaturesInBF16(j.Precision) {
		copies = 5
	}
	mem.Features = copies*mem.Features + 23*int64(j.N)
	mem.Dataset = 0
	ev := j.isolatedEvalMemory(one)
	switch {
	case j.Isolated.Layerwise:
		ev = j.StagingBound(j.layerwiseEvalMemory(workers, j.isolatedChunks(workers), j.Isolated.EvalFiles))
	case workers > 1:
		ev = j.isolatedEvalMemory(es)
	}
	mem.addEvaluation(ev)
	return mem
}

// OutOfCoreReadBytes is what reading one induced partition from a
// prepared dataset with one block per chunk costs: its rows (a share 2/C
// of the vertices, IsolatedSize) with two row pointers each (one per
// column block), 8 bytes per nonzero, and FeatureBytes (4, or 2 for a
// bfloat16 dataset) per feature and 5 per label and split of each row
// (jobs' chunkReader counts the same).
func (j Job) OutOfCoreReadBytes(workers int) float64 {
	v, nnz := j.IsolatedSize(workers)
	return 16*v + 8*nnz + (j.featureBytes()*float64(j.Features)+5)*v
}

// MaxPartitionsPerWorker bounds the partitions IsolatedPartitionsFor
// tries: 64 partitions a worker, 64 phases an epoch.
const MaxPartitionsPerWorker = 64

// IsolatedPartitionsFor is the one rule for the partitions of an
// isolated job that leaves grappa.partitions unset: one per worker when
// its predicted memory fits memPerRank (or no limit is known, ≤ 0), else
// the fewest, doubling from one per worker up to MaxPartitionsPerWorker
// per worker and no more than the chunks set, whose prediction fits;
// fits is false when none does (and p is one per worker). More
// partitions are smaller: the step's activations and the partition's
// shards shrink, while the graph every worker holds does not.
func (j Job) IsolatedPartitionsFor(workers int, memPerRank int64) (p int, fits bool) {
	if j.Isolated.Partitions > 0 {
		return j.Isolated.Partitions, memPerRank <= 0 || j.IsolatedMemory(workers).Total() <= memPerRank
	}
	if memPerRank <= 0 || j.IsolatedMemory(workers).Total() <= memPerRank {
		return workers, true
	}
	for p := 2 * workers; p <= MaxPartitionsPerWorker*workers; p *= 2 {
		if c := j.Isolated.Chunks; c > 0 && c < p {
			break
		}
		k := j
		k.Isolated.Partitions = p
		if k.IsolatedMemory(workers).Total() <= memPerRank {
			return p, true
		}
	}
	return workers, false
}
