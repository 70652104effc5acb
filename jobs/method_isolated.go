package jobs

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grappa"
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
type isolatedRun struct {
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
	loader              *grappa.Loader
	ctl                 grappa.Controller
	log                 *zap.Logger
	// eval is the distributed evaluation over all the workers (nil on
	// one worker, whose own model evaluates); chunkBytes is
	// loader.Bytes at the last epoch's end.
	eval       *isolatedEval
	chunkBytes int64

	superEpoch int
	part       grappa.Partition
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

// setupIsolated builds the worker's model, the chunks and the schedule,
// loads the first partition, points the batch builder at it and builds
// the evaluation model on the evaluation grid (s.evalGrid; nil: one
// worker, which evaluates alone).
func setupIsolated(s setup) (Method, error) {
	cfg := s.cfg
	// The partition changes between epochs, after the controller's
	// decision, and a batch's factor is set as it is built: the next batch
	// must not be built before the step that uses it.
	cfg.Train.Prefetch = false
	pm, err := setupPlexus(s)
	if err != nil {
		return nil, err
	}
	j := pm.(*plexus)
	gr := cfg.Grappa
	adj, train, err := isolatedGraph(s.src) // the structure and split, in vertex ids
	if err != nil {
		return nil, err
	}
	n := adj.Rows
	w := j.g.Shape.D
	p, c := gr.PartitionCount(w), gr.ChunkCount(w)
	phases, err := grappa.NewPhases(p, w)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", cfg.Label(), err)
	}
	ch, err := grappa.SplitRandom(n, c, uint64(cfg.Train.Seed))
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
	iso := &isolatedRun{adj: adj, train: train, ch: ch, sc: sc, kind: kind, hops: cfg.Model.Layers,
		corr: corr, rank: j.g.CD, phase: -1, covS: -1, phases: phases, log: s.log, batch: cfg.Train.BatchSize, seed: uint64(cfg.Train.Seed),
		ctl: grappa.Controller{EpochsPerSuperEpoch: eps, Deficit: deficit, Patience: gr.DeficitEpochs}}
	iso.draw = make([]int32, iso.batch)
	iso.loader = grappa.NewLoader(adj, ch, train, sc, kind, iso.hops, s.src.Sizes().Features, iso.slot(0, 0))
	// The batch buffers are sized once, for the largest partition: two
	// chunks for induced partitions, the whole graph for halo ones (a halo
	// can reach every vertex). Sizing induced ones for the whole graph
	// too reserved, on every worker, batch arrays with room for all its
	// vertices and nonzeros, which the collector counts against the
	// memory limit.
	j.batches, err = gcn.NewBatchBuilder(j.g, j.m.Cfg, j.m.Shards(), uint64(cfg.Train.Seed), partitionBound(ch, kind, n))
	if err != nil {
		return nil, err
	}
	j.batches.Vertices = iso.vertices
	iso.perPhase = grappa.StepsPerEpoch(dataset.Count(train), c, cfg.Train.BatchSize, cfg.Train.StepsPerEpoch)
	j.steps = iso.perPhase * phases.Count()
	iso.enter(0)
	j.batches.LossMask = iso.mask
	evalGrid := "the worker's own (one worker)"
	if eg := s.evalGrid; eg != nil {
		if iso.eval, err = newIsolatedEval(eg, j.m, s.src, OptimizerFor(cfg), RunOptions(cfg), s.log); err != nil {
			return nil, err
		}
		evalGrid = fmt.Sprintf("%dx%dx%d", eg.X, eg.Y, eg.Z)
	}
	if s.world.Rank() == 0 {
		s.log.Info("isolated training", zap.Int("workers", w), zap.Int("partitions", p), zap.Int("phases", phases.Count()),
			zap.Int("chunks", c), zap.String("partition", gr.Partition),
			zap.String("correction", gr.Correction), zap.Int("epochs_per_super_epoch", eps),
			zap.Int("cover_super_epochs", sc.Cover()), zap.Int("batch_size", iso.batch), zap.Int("steps_per_epoch", j.steps),
			zap.String("eval_grid", evalGrid))
	}
	return &isolated{plexus: j, iso: iso}, nil
}

// Start moves a resumed run to the partition of its step: the
// controller's decisions are replayed over the completed epochs (they
// depend on the schedule and the coverage alone) to the super-epoch they
// reach, and the step's place in its epoch gives the phase.
func (m *isolated) Start(step, epochs int) error {
	m.iso.replay(epochs, step%m.steps/m.iso.perPhase)
	return m.plexus.Start(step, epochs)
}

// Step moves to the step's phase (its partition), sets the model's
// gradient scale, the batch's correction factor, and trains.
func (m *isolated) Step(step int) (float64, error) {
	m.iso.enter(step % m.steps / m.iso.perPhase)
	m.iso.beforeStep(m.m)
	return m.plexus.Step(step)
}

// EndEpoch asks the controller whether the super-epoch ends here and, if
// so, moves to the next partition.
func (m *isolated) EndEpoch() { m.iso.endEpoch() }

// Evaluate runs on the evaluation grid when there is one: its bytes are
// the evaluation's own.
func (m *isolated) Evaluate() (gcn.Accuracy, int64, error) { return m.iso.evaluate(m.m) }

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
	p := iso.part
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
func (iso *isolatedRun) enter(i int) {
	if i == iso.phase {
		return
	}
	iso.phase = i
	sl := iso.slot(iso.superEpoch, i)
	iso.worker = sl.Part
	iso.use(iso.loader.Load(sl))
	next := iso.superEpoch + 1
	switch {
	case i+1 < iso.phases.Count():
		iso.loader.Prefetch(iso.slot(iso.superEpoch, i+1))
		return
	case iso.phases.Count() > 1:
		c := iso.ctl // what endEpoch will decide, on a copy
		c.Step(iso.minCov)
		if !c.EndEpoch() {
			next = iso.superEpoch
		}
	}
	iso.loader.Prefetch(iso.slot(next, 0))
}

// use makes p, the partition of super-epoch iso.superEpoch, the one the
// steps train on.
func (iso *isolatedRun) use(p grappa.Partition) {
	iso.part = p
	if iso.mask == nil {
		iso.mask = make([]bool, len(iso.train))
	}
	clear(iso.mask)
	iso.masked = iso.masked[:0]
	if iso.batch == 0 || len(iso.part.Train) == 0 {
		for _, t := range iso.part.Train {
			iso.mask[iso.part.Verts[t]] = true
		}
		local, global := grappa.Degrees(iso.adj, iso.part)
		iso.factor = iso.corr.Factor(local, global)
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
func (iso *isolatedRun) replay(epochs, phase int) {
	s, cov := iso.superEpoch, iso.minCov
	for range epochs {
		iso.ctl.Step(cov)
		if iso.ctl.EndEpoch() {
			s++
			cov = iso.coverage(s)
		}
	}
	if s == iso.superEpoch && phase == iso.phase {
		return
	}
	if s != iso.superEpoch {
		iso.superEpoch, iso.phase = s, -1
	}
	iso.enter(phase)
	iso.chunkBytes = iso.loader.Bytes
}

// beforeStep sets the model's gradient scale for the step.
func (iso *isolatedRun) beforeStep(m *gcn.Model) { m.GradScale = float32(iso.factor) }

// endEpoch asks the controller whether the super-epoch ends and loads
// the next epoch's first partition: the next super-epoch's, or with
// several phases the first phase's again.
func (iso *isolatedRun) endEpoch() {
	iso.ctl.Step(iso.minCov)
	if iso.ctl.EndEpoch() {
		iso.superEpoch++
		iso.phase = -1
	}
	iso.enter(0)
}

// close stops the Loader's prefetch.
func (iso *isolatedRun) close() { iso.loader.Close() }
