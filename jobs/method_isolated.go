package jobs

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grappa"
	"scalegnn/infer"
	"scalegnn/jobfile"
	"scalegnn/sampler"
	"scalegnn/spmm"
)

// isolatedRun is a train.mode = "isolated" job's Grappa state. Every rank
// is one worker with the whole model on a 1×1×1 grid (grid.d = ranks), and
// trains the partitions grappa.Phases gives it, one per phase (P/M
// phases an epoch; one, its own partition, when P = M): the
// mini-batch machinery builds the current partition as its batch
// (gcn.BatchBuilder.Vertices, weights unscaled), the loss covers the
// partition's training vertices, and the gradient, scaled by the
// partition's correction factor (Model.GradScale), is averaged in the one
// data-parallel all-reduce. Nothing else crosses ranks while training.
//
// With batch_size = 0 the batch is the whole partition, so a partition's
// coverage ĉ and factor are constant over its super-epoch and are computed
// once, when it is loaded. With batch_size = B > 0 each step draws B of the
// partition's training vertices (uniformly, a function of seed, worker and
// step), trains on their k-hop closure inside the partition
// (grappa.Partition.Batch) with the loss on the B vertices only, and
// scales by that batch's factor. Every rank holds the whole graph (a 1×1×1
// grid's shards are all of it, from memory or a prepared dataset), so the
// coverage-deficit switch is computed by every rank for every worker
// alike, with no vote to exchange.
//
// Out of core (grappa.out_of_core) no rank holds the graph: the loader
// reads each partition's blocks from the source (chunkReader), the model
// trains on that partition's own shards (gcn.NewSubgraphShards), whole,
// and the factor comes from the degrees read with it; the deficit switch
// is refused (it needs every partition's coverage).
type isolatedRun struct {
	n     int
	order []int32 // the vertex at each position of the source's order 0
	adj   *spmm.CSR
	train []bool
	ch    *grappa.Chunks
	sc    grappa.Schedule
	kind  grappa.Kind
	hops  int
	corr  grappa.Correction
	// rank is the rank's place among the M ranks; worker the partition
	// (the schedule's worker) it trains in phase `phase` (−1: none
	// loaded); perPhase the steps of a phase.
	rank, worker, phase int
	phases              grappa.Phases
	perPhase            int
	loader              *grappa.Loader[isoPart]
	// outOfCore: partitions are read from the source (grappa.out_of_core)
	// and trained as their own shards; adj and train are then nil.
	outOfCore bool
	ctl       grappa.Controller
	log       *zap.Logger
	// eval is the distributed evaluation over all the workers (nil on
	// one worker, whose own model evaluates), or layers the layer-wise
	// one (grappa.evaluation = "layerwise") on evalComm; chunkBytes is
	// loader.Bytes at the last epoch's end.
	eval       *isolatedEval
	layers     *infer.Engine
	evalComm   collectives.Comm
	chunkBytes int64

	superEpoch int
	part       isoPart
	mask       []bool // the step's loss vertices, by vertex id
	factor     float64
	minCov     float64 // the lowest ĉ over the partitions this super-epoch
	covS       int     // the super-epoch minCov is of (−1: none)

	// batch is train.batch_size (0: the whole partition); seed, draw and
	// scratch draw a step's batch, masked lists the vertices set in mask.
	batch   int
	seed    uint64
	draw    []int32
	scratch sampler.UniformScratch
	masked  []int32
}

var _ Method = (*isolated)(nil)

// isolated is train.mode = "isolated" (Grappa): a plexus on a 1×1×1 grid
// per worker whose batches are the worker's partition (isolatedRun).
type isolated struct {
	*plexus
	iso *isolatedRun
}

// setupIsolated builds the chunks, the schedule and the worker's model,
// loads the first partition, and builds the evaluation model on the
// evaluation grid (s.evalGrid; nil: one worker, which evaluates alone, or
// with grappa.out_of_core on its own 1×1×1 grid from the source).
func setupIsolated(s setup) (Method, error) {
	cfg := s.cfg
	// The partition changes between epochs, after the controller's
	// decision, and a batch's factor is set as it is built: the next batch
	// must not be built before the step that uses it.
	cfg.Train.Prefetch = false
	gr := cfg.Grappa
	w := s.g.Shape.D
	p, c := gr.PartitionCount(w), gr.ChunkCount(w)
	phases, err := grappa.NewPhases(p, w)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", cfg.Label(), err)
	}
	sc, err := grappa.NewSchedule(p, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", cfg.Label(), err)
	}
	kind, _ := grappa.ParseKind(gr.Partition)
	corr, _ := grappa.ParseCorrection(gr.Correction)
	eps := gr.EpochsPerSuperEpoch
	if eps == 0 {
		eps = 1
	}
	deficit := gr.Deficit
	if gr.DeficitEpochs == 0 {
		deficit = 2 // never exceeded: 1 − ĉ ≤ 1
	}
	iso := &isolatedRun{n: s.src.Sizes().N, order: s.src.Orders().Order[0], sc: sc, kind: kind, hops: cfg.Model.Layers, outOfCore: gr.OutOfCore,
		corr: corr, rank: s.g.CD, phase: -1, covS: -1, phases: phases, log: s.log, batch: cfg.Train.BatchSize, seed: uint64(cfg.Train.Seed),
		ctl: grappa.Controller{EpochsPerSuperEpoch: eps, Deficit: deficit, Patience: gr.DeficitEpochs}}
	iso.draw = make([]int32, iso.batch)
	var j *plexus
	if gr.OutOfCore {
		j, err = iso.setupOutOfCore(s, c)
	} else {
		j, err = iso.setupInMemory(s, c)
	}
	if err != nil {
		return nil, err
	}
	j.steps = iso.perPhase * phases.Count()
	evalGrid := "the worker's own (one worker)"
	eg := s.evalGrid
	if eg == nil && gr.OutOfCore {
		eg = s.g // one worker: its 1×1×1 grid, on shards of its own
	}
	switch {
	case gr.Layerwise():
		if gr.EvalDir != "" {
			if err := os.MkdirAll(gr.EvalDir, 0o755); err != nil {
				return nil, fmt.Errorf("%s: grappa.eval_dir: %w", cfg.Label(), err)
			}
		}
		if iso.layers, err = infer.New(s.evalComm, s.dev, s.mcfg, s.src, c, gr.EvalDir); err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.Label(), err)
		}
		iso.evalComm = s.evalComm
		iso.layers.CacheStrips(stripBudget())
		evalGrid = fmt.Sprintf("layer-wise over %d row blocks", c)
	case eg != nil:
		if iso.eval, err = newIsolatedEval(eg, j.m, s.src, OptimizerFor(cfg), RunOptions(cfg), s.log); err != nil {
			return nil, err
		}
		evalGrid = fmt.Sprintf("%dx%dx%d", eg.X, eg.Y, eg.Z)
	}
	if s.world.Rank() == 0 {
		s.log.Info("isolated training", zap.Int("workers", w), zap.Int("partitions", p), zap.Int("phases", phases.Count()),
			zap.Int("chunks", c), zap.String("partition", gr.Partition), zap.Bool("out_of_core", gr.OutOfCore),
			zap.String("correction", gr.Correction), zap.Int("epochs_per_super_epoch", eps),
			zap.Int("cover_super_epochs", sc.Cover()), zap.Int("batch_size", iso.batch), zap.Int("steps_per_epoch", j.steps),
			zap.String("eval_grid", evalGrid))
	}
	return &isolated{plexus: j, iso: iso}, nil
}

// chunksFor deals the vertices of src into c chunks as grappa.split says.
func chunksFor(cfg *jobfile.Config, src gcn.Source, c int) (*grappa.Chunks, error) {
	if cfg.Grappa.SplitBlocks() {
		return grappa.SplitOrder(src.Orders().Order[0], c)
	}
	return grappa.SplitRandom(src.Sizes().N, c, uint64(cfg.Train.Seed))
}

// setupInMemory is the worker of a graph every worker holds whole: a
// plexus on the 1×1×1 grid's shards (all of the graph) whose batches the
// batch builder cuts from them, for the partitions grappa.Build forms
// from the graph's structure.
func (iso *isolatedRun) setupInMemory(s setup, c int) (*plexus, error) {
	cfg := s.cfg
	pm, err := setupPlexus(s)
	if err != nil {
		return nil, err
	}
	j := pm.(*plexus)
	adj, train, err := isolatedGraph(s.src) // the structure and split, in vertex ids
	if err != nil {
		return nil, err
	}
	n := adj.Rows
	ch, err := chunksFor(cfg, s.src, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", cfg.Label(), err)
	}
	iso.adj, iso.train, iso.ch = adj, train, ch
	features := s.src.Sizes().Features
	iso.loader = grappa.NewLoader(iso.sc, func(b, x int) (isoPart, int64, error) {
		// The vertex set and the training vertices' degrees, built in the
		// prefetch: what use() needs of a partition.
		p := grappa.Build(adj, ch, train, b, x, iso.kind, iso.hops)
		l, g := grappa.Degrees(adj, p)
		return isoPart{Partition: p, local: l, global: g}, 0, nil
	}, func(k int) int64 { return grappa.ChunkBytes(adj, ch, k, features) }, iso.slot(0, 0))
	// The batch buffers are sized once, for the largest partition: two
	// chunks for induced partitions, the whole graph for halo ones (a halo
	// can reach every vertex). Sizing induced ones for the whole graph
	// too reserved, on every worker, batch arrays with room for all its
	// vertices and nonzeros, which the collector counts against the
	// memory limit.
	j.batches, err = gcn.NewBatchBuilder(j.g, j.m.Cfg, j.m.Shards(), uint64(cfg.Train.Seed), partitionBound(ch, iso.kind, n))
	if err != nil {
		return nil, err
	}
	j.batches.Vertices = iso.vertices
	iso.perPhase = grappa.StepsPerEpoch(dataset.Count(train), c, cfg.Train.BatchSize, cfg.Train.StepsPerEpoch)
	if err := iso.enter(0); err != nil {
		return nil, err
	}
	j.batches.LossMask = iso.mask
	return j, nil
}

// setupOutOfCore is the worker of grappa.out_of_core: no whole-graph
// shards or structure; the loader reads each partition's blocks from the
// source (chunkReader), and the model, built on the first partition,
// trains on each partition's shards in turn.
func (iso *isolatedRun) setupOutOfCore(s setup, c int) (*plexus, error) {
	cfg := s.cfg
	o := s.src.Orders()
	if !slices.Equal(o.Order[0], o.Order[1]) {
		return nil, fmt.Errorf("%s: grappa.out_of_core reads a chunk's rows and features in one vertex order, and the dataset has two (double permutation): prepare it with -permute single", cfg.Label())
	}
	ch, err := chunksFor(cfg, s.src, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", cfg.Label(), err)
	}
	iso.ch = ch
	sz := s.src.Sizes()
	rd := &chunkReader{src: s.src, g: s.g, cfg: s.mcfg, n: sz.N, c: c, features: sz.Features, degrees: iso.corr != grappa.None,
		bf16: featuresBF16(cfg)}
	iso.loader = grappa.NewLoader(iso.sc, rd.read, nil, iso.slot(0, 0))
	iso.perPhase = 1 // batch_size = 0: a partition is one step
	if err := iso.enter(0); err != nil {
		return nil, err
	}
	// The model is built on a copy of the first partition's Shards value
	// (the same arrays), so that every partition, the first included,
	// trains through the model's batch binding and only one arena is
	// ever reserved (a model's own shards would get one of their own).
	first := *iso.part.sh
	m, err := gcn.NewModel(s.g, s.dev, s.mcfg, OptimizerFor(cfg), &first, RunOptions(cfg))
	if err != nil {
		return nil, err
	}
	return &plexus{g: s.g, world: s.world, m: m, steps: 1}, nil
}

// Start moves a resumed run to the partition of its step: the
// controller's decisions are replayed over the completed epochs (they
// depend on the schedule and the coverage alone) to the super-epoch they
// reach, and the step's place in its epoch gives the phase.
func (m *isolated) Start(step, epochs int) error {
	if err := m.iso.replay(epochs, step%m.steps/m.iso.perPhase); err != nil {
		return err
	}
	return m.plexus.Start(step, epochs)
}

// Step moves to the step's phase (its partition), sets the model's
// gradient scale, the batch's correction factor, and trains.
func (m *isolated) Step(step int) (float64, error) {
	if err := m.iso.enter(step % m.steps / m.iso.perPhase); err != nil {
		return 0, err
	}
	if m.iso.outOfCore {
		m.m.Use(m.iso.part.sh)
	}
	m.iso.beforeStep(m.m)
	return m.plexus.Step(step)
}

// EndEpoch asks the controller whether the super-epoch ends here and, if
// so, moves to the next partition.
func (m *isolated) EndEpoch() {
	if err := m.iso.endEpoch(); err != nil {
		// The next epoch's first Step loads the partition again and
		// returns the error there, on the loop's error path.
		m.iso.phase = -1
	}
}

// Evaluate runs on the evaluation grid when there is one: its bytes are
// the evaluation's own.
func (m *isolated) Evaluate() (gcn.Accuracy, int64, error) { return m.iso.evaluate(m.m) }

// Probabilities, Embeddings and Vertices run on the evaluation model
// when the worker holds partitions only (grappa.out_of_core); otherwise
// on the worker's whole graph, as a plexus's.
func (m *isolated) Probabilities() (gcn.Block, error) {
	if l := m.iso.layers; l != nil {
		p, err := l.Logits(infer.ModelWeights(m.m))
		if err != nil {
			return gcn.Block{}, err
		}
		gcn.SoftmaxRows(p, m.m.Cfg.Classes)
		return m.iso.layerBlock(p, m.m.Cfg.Classes), nil
	}
	if m.iso.outOfCore {
		return m.iso.eval.model(m.m).Probabilities()
	}
	return m.plexus.Probabilities()
}

func (m *isolated) Embeddings(l int) (gcn.Block, error) {
	if e := m.iso.layers; e != nil {
		x, err := e.Embeddings(infer.ModelWeights(m.m), l)
		if err != nil {
			return gcn.Block{}, err
		}
		return m.iso.layerBlock(x, m.m.Cfg.LayerSpecs()[l].Out), nil
	}
	if m.iso.outOfCore {
		return m.iso.eval.model(m.m).Embeddings(l)
	}
	return m.plexus.Embeddings(l)
}

func (m *isolated) Vertices() int {
	if m.iso.layers != nil {
		return m.iso.n
	}
	if m.iso.outOfCore {
		return m.iso.eval.m.Shards().N
	}
	return m.plexus.Vertices()
}

// stripBudget is how much of the adjacency a layer-wise evaluation may
// keep between its reads (infer.Engine.CacheStrips): a quarter of what the
// rank's soft memory limit (the memory check's limit, set by the
// launcher) leaves above the heap in use at setup; none without a limit.
func stripBudget() int64 {
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 {
		return 0
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return max(0, (limit-int64(ms.HeapAlloc))/4)
}

// layerBlock is the layer-wise engine's rows of this rank, x of width
// cols, as the block predictions write.
func (iso *isolatedRun) layerBlock(x []float32, cols int) gcn.Block {
	lo, hi := iso.layers.Rows()
	return gcn.Block{Vertices: iso.order[lo:hi], Cols: cols, C0: 0, C1: cols, Data: x, Owner: true}
}

func (m *isolated) Split(train time.Duration) Split {
	s := m.plexus.Split(train)
	s.ChunkBytes = m.iso.epochChunkBytes()
	return s
}

func (m *isolated) Close() {
	m.plexus.Close()
	m.iso.close()
}

// evaluate is the full-graph accuracy of the trained model m, on the
// evaluation grid when there is one, and the bytes this rank's
// evaluation handed to collectives.
func (iso *isolatedRun) evaluate(m *gcn.Model) (gcn.Accuracy, int64, error) {
	if iso.layers != nil {
		// The layer-wise evaluation needs none of a step's memory.
		m.ReleaseArenas()
		b0 := iso.evalComm.Counters().TotalBytes()
		acc, err := iso.layers.Evaluate(infer.ModelWeights(m))
		if t := iso.layers.Times; err == nil && iso.log != nil {
			// Where the time went, for the performance model's terms
			// (perfmodel.addLayerwiseEval): this rank's.
			iso.log.Debug("layer-wise evaluation", zap.Duration("total", t.Total), zap.Duration("read", t.Read),
				zap.Int64("strip_bytes", t.StripBytes), zap.Duration("store", t.Store), zap.Duration("gather", t.Gather),
				zap.Duration("compute", t.Total-t.Read-t.Store-t.Gather))
		}
		return acc, iso.evalComm.Counters().TotalBytes() - b0, err
	}
	if iso.eval == nil {
		acc, err := m.Evaluate()
		return acc, 0, err
	}
	return iso.eval.evaluate(m)
}

// epochChunkBytes is what the chunk loads read since the last call.
func (iso *isolatedRun) epochChunkBytes() int64 {
	b := iso.loader.Bytes - iso.chunkBytes
	iso.chunkBytes = iso.loader.Bytes
	return b
}

// partitionBound is the most vertices a partition (so a batch) can hold:
// the two largest chunks for induced partitions, all n for halo ones.
func partitionBound(ch *grappa.Chunks, kind grappa.Kind, n int) int {
	if kind != grappa.Induced {
		return n
	}
	a, b := 0, 0
	for _, m := range ch.Members {
		switch l := len(m); {
		case l > a:
			a, b = l, a
		case l > b:
			b = l
		}
	}
	return min(n, a+b)
}

// vertices is the batch builder's batch of step: the whole partition, or
// a batch of its training vertices closed under k hops inside it, whose
// loss vertices it marks in mask and whose factor it sets.
func (iso *isolatedRun) vertices(step int) []int32 {
	p := iso.part.Partition
	if iso.batch == 0 || len(p.Train) == 0 {
		return p.Verts
	}
	idx := sampler.UniformInto(iso.draw, &iso.scratch, iso.seed, iso.worker, step, len(p.Train), min(iso.batch, len(p.Train)))
	b := p.Batch(iso.adj, idx, iso.hops)
	for _, v := range iso.masked {
		iso.mask[v] = false
	}
	iso.masked = iso.masked[:0]
	for _, t := range b.Train {
		iso.mask[b.Verts[t]] = true
		iso.masked = append(iso.masked, b.Verts[t])
	}
	local, global := grappa.Degrees(iso.adj, b)
	iso.factor = iso.corr.Factor(local, global)
	return b.Verts
}

// slot is the rank's partition in phase i of super-epoch s.
func (iso *isolatedRun) slot(s, i int) grappa.Slot {
	return grappa.Slot{SuperEpoch: s, Part: iso.phases.Partition(iso.rank, i)}
}

// enter makes phase i's partition of the current super-epoch the one the
// steps train on, unless it already is, and prefetches the rank's next
// one: the next phase's, or after the last phase the first of the next
// epoch, in the super-epoch the controller will then be in (with one
// phase, the next super-epoch's: the partition stays until then).
func (iso *isolatedRun) enter(i int) error {
	if i == iso.phase {
		return nil
	}
	sl := iso.slot(iso.superEpoch, i)
	p, err := iso.loader.Load(sl)
	if err != nil {
		return err
	}
	iso.phase, iso.worker = i, sl.Part
	iso.use(p)
	next := iso.superEpoch + 1
	switch {
	case i+1 < iso.phases.Count():
		iso.loader.Prefetch(iso.slot(iso.superEpoch, i+1))
		return nil
	case iso.phases.Count() > 1:
		c := iso.ctl // what endEpoch will decide, on a copy
		c.Step(iso.minCov)
		if !c.EndEpoch() {
			next = iso.superEpoch
		}
	}
	iso.loader.Prefetch(iso.slot(next, 0))
	return nil
}

// use makes p, the partition of super-epoch iso.superEpoch, the one the
// steps train on.
func (iso *isolatedRun) use(p isoPart) {
	iso.part = p
	if iso.batch == 0 || len(p.Train) == 0 {
		iso.factor = 1
		if iso.corr != grappa.None {
			iso.factor = iso.corr.Factor(p.local, p.global)
		}
	}
	if !iso.outOfCore {
		// The loss mask of the batches cut from the whole graph (an
		// out-of-core partition's shards carry their own).
		if iso.mask == nil {
			iso.mask = make([]bool, len(iso.train))
		}
		clear(iso.mask)
		iso.masked = iso.masked[:0]
		if iso.batch == 0 || len(p.Train) == 0 {
			for _, t := range p.Train {
				iso.mask[p.Verts[t]] = true
			}
		}
	}
	if iso.covS != iso.superEpoch {
		iso.minCov, iso.covS = iso.coverage(iso.superEpoch), iso.superEpoch
	}
}

// coverage is the lowest ĉ over the partitions in super-epoch s (1 when
// the controller does not look at it).
func (iso *isolatedRun) coverage(s int) float64 {
	c := 1.0
	if iso.ctl.Patience > 0 {
		for w := range iso.sc.W {
			b, x := iso.sc.Partition(w, s)
			l, g := grappa.Degrees(iso.adj, grappa.Build(iso.adj, iso.ch, iso.train, b, x, iso.kind, iso.hops))
			c = min(c, grappa.Coverage(l, g))
		}
	}
	return c
}

// replay brings a fresh run to where an uninterrupted one stands after
// `epochs` epochs and into phase `phase` of the next: the controller's
// state, the super-epoch and the partition. The chunk reads of the
// skipped super-epochs are not counted.
func (iso *isolatedRun) replay(epochs, phase int) error {
	s, cov := iso.superEpoch, iso.minCov
	for range epochs {
		iso.ctl.Step(cov)
		if iso.ctl.EndEpoch() {
			s++
			cov = iso.coverage(s)
		}
	}
	if s == iso.superEpoch && phase == iso.phase {
		return nil
	}
	if s != iso.superEpoch {
		iso.superEpoch, iso.phase = s, -1
	}
	err := iso.enter(phase)
	iso.chunkBytes = iso.loader.Bytes
	return err
}

// beforeStep sets the model's gradient scale for the step.
func (iso *isolatedRun) beforeStep(m *gcn.Model) { m.GradScale = float32(iso.factor) }

// endEpoch asks the controller whether the super-epoch ends and loads
// the next epoch's first partition: the next super-epoch's, or with
// several phases the first phase's again.
func (iso *isolatedRun) endEpoch() error {
	iso.ctl.Step(iso.minCov)
	if iso.ctl.EndEpoch() {
		iso.superEpoch++
		iso.phase = -1
	}
	return iso.enter(0)
}

// close stops the Loader's prefetch and removes the layer-wise
// evaluation's files.
func (iso *isolatedRun) close() {
	iso.loader.Close()
	if iso.layers != nil {
		iso.layers.Close()
	}
}
