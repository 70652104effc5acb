package jobs

import (
	"fmt"

	"go.uber.org/zap"

	"scalegnn/gcn"
	"scalegnn/grappa"
	"scalegnn/spmm"
)

// isolatedRun is a train.mode = "isolated" job's Grappa state. Every rank
// is one worker with the whole model on a 1×1×1 grid (grid.d = ranks): the
// mini-batch machinery builds the worker's partition as its batch
// (gcn.BatchBuilder.Vertices, weights unscaled), the loss covers the
// partition's training vertices, and the gradient, scaled by the
// partition's correction factor (Model.GradScale), is averaged in the one
// data-parallel all-reduce. Nothing else crosses ranks while training.
//
// The batch is the whole partition (batch_size = 0), so a partition's
// coverage ĉ and factor are constant over its super-epoch and are computed
// once, when it is loaded. Every rank holds the whole graph (the in-memory
// source), so the coverage-deficit switch is computed by every rank for
// every worker alike, with no vote to exchange.
type isolatedRun struct {
	adj    *spmm.CSR
	train  []bool
	ch     *grappa.Chunks
	sc     grappa.Schedule
	kind   grappa.Kind
	hops   int
	corr   grappa.Correction
	worker int
	loader *grappa.Loader
	ctl    grappa.Controller
	log    *zap.Logger

	superEpoch int
	part       grappa.Partition
	mask       []bool // the partition's training vertices, by vertex id
	factor     float64
	minCov     float64 // the lowest ĉ over the workers this super-epoch
}

// setupIsolated builds the chunks and the schedule, loads the first
// partition and points the job's batch builder at it.
func (j *Job) setupIsolated() error {
	cfg := j.Cfg
	gr := cfg.Grappa
	graph, err := LoadGraph(cfg.Dataset) // the raw adjacency and split, in vertex ids
	if err != nil {
		return err
	}
	w := j.Grid.Shape.D
	c := gr.Chunks
	if c == 0 {
		c = w
	}
	ch, err := grappa.SplitRandom(graph.N, c, uint64(cfg.Train.Seed))
	if err != nil {
		return fmt.Errorf("%s: %v", cfg.label(), err)
	}
	sc, err := grappa.NewSchedule(w, c)
	if err != nil {
		return fmt.Errorf("%s: %v", cfg.label(), err)
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
	iso := &isolatedRun{adj: graph.Adj, train: graph.Train, ch: ch, sc: sc, kind: kind, hops: cfg.Model.Layers,
		corr: corr, worker: j.Grid.CD, log: j.log,
		ctl: grappa.Controller{EpochsPerSuperEpoch: eps, Deficit: deficit, Patience: gr.DeficitEpochs}}
	iso.loader = grappa.NewLoader(graph.Adj, ch, graph.Train, sc, iso.worker, kind, iso.hops)
	// The whole graph's vertex count bounds every partition, so the batch
	// buffers never regrow.
	j.batches, err = gcn.NewBatchBuilder(j.Grid, j.Model.Cfg, j.Model.Shards(), uint64(cfg.Train.Seed), graph.N)
	if err != nil {
		return err
	}
	j.batches.Vertices = func(int) []int32 { return iso.part.Verts }
	// The partition changes between epochs, after the controller's
	// decision: the next batch must not be built before it.
	cfg.Train.Prefetch = false
	j.steps, j.iso = 1, iso
	iso.next()
	j.batches.LossMask = iso.mask
	if j.world.Rank() == 0 {
		j.log.Info("isolated training", zap.Int("workers", w), zap.Int("chunks", c), zap.String("partition", gr.Partition),
			zap.String("correction", gr.Correction), zap.Int("epochs_per_super_epoch", eps),
			zap.Int("cover_super_epochs", sc.Cover()))
	}
	return nil
}

// next moves to the next super-epoch's partition (prefetched by the
// Loader) and computes its factor and the workers' lowest coverage.
func (iso *isolatedRun) next() {
	iso.part = iso.loader.Next()
	if iso.mask == nil {
		iso.mask = make([]bool, len(iso.train))
	}
	clear(iso.mask)
	for _, t := range iso.part.Train {
		iso.mask[iso.part.Verts[t]] = true
	}
	local, global := grappa.Degrees(iso.adj, iso.part)
	iso.factor = iso.corr.Factor(local, global)
	iso.minCov = 1
	if iso.ctl.Patience > 0 {
		for w := range iso.sc.W {
			b, x := iso.sc.Partition(w, iso.superEpoch)
			l, g := grappa.Degrees(iso.adj, grappa.Build(iso.adj, iso.ch, iso.train, b, x, iso.kind, iso.hops))
			iso.minCov = min(iso.minCov, grappa.Coverage(l, g))
		}
	}
}

// beforeStep sets the model's gradient scale for the step.
func (iso *isolatedRun) beforeStep(m *gcn.Model) { m.GradScale = float32(iso.factor) }

// endEpoch asks the controller whether the super-epoch ends and, if so,
// loads the next partition.
func (iso *isolatedRun) endEpoch() {
	iso.ctl.Step(iso.minCov)
	if iso.ctl.EndEpoch() {
		iso.superEpoch++
		iso.next()
	}
}

// close stops the Loader's prefetch.
func (iso *isolatedRun) close() { iso.loader.Close() }
