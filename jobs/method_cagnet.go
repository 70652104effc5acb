package jobs

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"scalegnn/cagnet"
	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/perfmodel"
)

var (
	_ Method = (*cagnetFull)(nil)
	_ Method = (*cagnetBatch)(nil)
)

// cagnetFull is train.algorithm = "1.5d" in full-graph training (package
// cagnet): one full-graph step per epoch. In the metrics, gemm_s is the
// step's whole time and comm_3d_bytes the bytes of the process row and
// column communicators.
type cagnetFull struct {
	replicated
	g *grid.Grid
	m *cagnet.Model
	// evalBytes is what evaluations have moved on the process row and
	// column communicators, which Counters leaves out.
	evalBytes int64
}

// setupCAGNET builds a 1.5D job from the Source (the normalised Â,
// permuted as [permute] says: order 0 of its Orders; in memory or a
// prepared dataset): cagnet.NewFromSource reads this rank's block rows
// only.
func setupCAGNET(s setup) (Method, error) {
	cfg := s.cfg
	t0 := time.Now()
	c := max(cfg.Grid.Replication, 1)
	m, err := cagnet.NewFromSource(s.world, s.dev, cagnet.Options{Replication: c,
		BF16: cfg.Train.CommDtype == collectives.BF16}, s.mcfg, OptimizerFor(cfg), s.src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Label(), err)
	}
	loadProgress(s.world)("the block rows")
	if s.world.Rank() == 0 {
		s.log.Info("1.5d (CAGNET) training", zap.Int("process_rows", m.L.Q), zap.Int("replication", m.L.C),
			zap.String("permutation", cfg.Permute.Scheme.String()), zap.Stringer("comm_dtype", cfg.Train.CommDtype),
			zap.Duration("block_rows_took", time.Since(t0)))
	}
	return &cagnetFull{replicated: replicated{comm: s.world, model: m}, g: s.g, m: m}, nil
}

func (c *cagnetFull) StepsPerEpoch() int   { return 1 }
func (c *cagnetFull) Start(int, int) error { return nil }
func (c *cagnetFull) BeginEpoch()          {}
func (c *cagnetFull) EndEpoch()            {}
func (c *cagnetFull) Close()               {}

func (c *cagnetFull) Step(int) (float64, error) {
	loss, err := c.m.LossAndGrad()
	if err != nil {
		return 0, err
	}
	c.m.Step()
	return loss, nil
}

func (c *cagnetFull) Evaluate() (gcn.Accuracy, int64, error) {
	e0 := c.rowCol()
	acc, valLoss, err := c.m.AccuracyAndValLoss()
	b := c.rowCol() - e0
	c.evalBytes += b
	a := accuracyOf(acc)
	a.ValLoss = valLoss
	return a, b, err
}

// rowCol is what this rank has handed to the process row and column
// communicators, evaluation included.
func (c *cagnetFull) rowCol() int64 {
	row, col := c.m.Comms()
	return row.Counters().TotalBytes() + col.Counters().TotalBytes()
}

func (c *cagnetFull) Counters() [2]int64 { return [2]int64{c.rowCol() - c.evalBytes, 0} }

func (c *cagnetFull) Split(train time.Duration) Split { return Split{GEMM: train} }

// Fingerprint is taken over one replica's ranks: each of a 1.5D
// mini-batch job's grid.d replicas holds the whole graph (the cube is the
// world when d = 1).
func (c *cagnetFull) Fingerprint() (gcn.Fingerprint, error) { return c.m.Fingerprint(c.g.Cube) }
func (c *cagnetFull) ModelConfig() gcn.Config               { return c.m.Config() }

// GridName is the 1.5D arrangement as the performance model names it:
// "1.5d QxC", with d= for replicas.
func (c *cagnetFull) GridName() string {
	return perfmodel.CAGNETBatchGrid(c.g.Shape.D, c.m.L.P, c.m.L.C)
}

// replicator is a method that replicates its blocks c times (1.5D):
// summary.json records c.
type replicator interface{ Replication() int }

// Replication is the 1.5D replication c.
func (c *cagnetFull) Replication() int { return c.m.L.C }

func (c *cagnetFull) Probabilities() (gcn.Block, error)   { return c.m.Probabilities() }
func (c *cagnetFull) Embeddings(l int) (gcn.Block, error) { return c.m.Embeddings(l) }
func (c *cagnetFull) Vertices() int                       { return c.m.Vertices() }

// accuracyOf is a 1.5D model's [train, val, test] accuracies as gcn's.
func accuracyOf(a [3]float64) gcn.Accuracy { return gcn.Accuracy{Train: a[0], Val: a[1], Test: a[2]} }
