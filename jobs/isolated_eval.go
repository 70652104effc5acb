package jobs

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
)

// isolatedEval is an isolated job's distributed evaluation. The workers
// train on 1×1×1 grids of their own, so a worker's model could evaluate
// only alone, holding the whole graph's activations. Instead all the
// workers form one 3D grid (d = 1, perfmodel.IsolatedEvalShape or
// grappa.eval_grid) with a model of its own over that grid's shards, and
// run the full-graph forward pass there as a full-graph job would: each
// rank holds its 3D blocks of the adjacency and activations, not the whole
// graph's. Before each
// evaluation the trained weights (the same on every worker after the
// gradient all-reduce) are copied into its parameter blocks. Its
// collectives run on the evaluation grid's communicators, so their bytes
// are counted as evaluation's, never as training's.
type isolatedEval struct {
	g     *grid.Grid
	m     *gcn.Model
	whole []float32 // a parameter's whole weights, reused
}

// newIsolatedEval builds the evaluation model on g's shards of src (g's
// communicators were split at the start of Setup, before anything could
// fail on one rank only).
func newIsolatedEval(g *grid.Grid, train *gcn.Model, src gcn.Source, opt gcn.Optimizer, run gcn.Options, log *zap.Logger) (*isolatedEval, error) {
	t0 := time.Now()
	name := fmt.Sprintf("%dx%dx%d", g.X, g.Y, g.Z)
	// The features in the training model's precision.
	sh, err := gcn.NewShardsWith(g, train.Cfg, src, gcn.ShardOptions{EvalOnly: true, FeaturesBF16: train.Options.FeaturesBF16})
	if err != nil {
		return nil, fmt.Errorf("isolated evaluation grid %s: %w", name, err)
	}
	m, err := gcn.NewModel(g, train.Device(), train.Cfg, opt, sh, run)
	if err != nil {
		return nil, fmt.Errorf("isolated evaluation grid %s: %w", name, err)
	}
	log.Info("isolated evaluation model", zap.String("grid", name),
		zap.Int64("shard_bytes", sh.Bytes()), zap.Duration("took", time.Since(t0)))
	return &isolatedEval{g: g, m: m}, nil
}

// evaluate copies train's weights into the evaluation model and returns
// the full-graph accuracy and the bytes this rank's evaluation handed to
// collectives.
func (e *isolatedEval) evaluate(train *gcn.Model) (gcn.Accuracy, int64, error) {
	e.load(train)
	b0 := e.bytes()
	acc, err := e.m.Evaluate()
	return acc, e.bytes() - b0, err
}

// model is the evaluation model with train's weights: what predictions
// and embeddings run on when the worker holds no whole graph.
func (e *isolatedEval) model(train *gcn.Model) *gcn.Model {
	e.load(train)
	return e.m
}

// load copies train's weights (the same on every worker after the
// gradient all-reduce) into the evaluation model's parameter blocks.
func (e *isolatedEval) load(train *gcn.Model) {
	if len(train.Params) != len(e.m.Params) {
		panic(fmt.Sprintf("jobs: %d trained parameters, %d in the evaluation model", len(train.Params), len(e.m.Params)))
	}
	for k, p := range train.Params {
		q := e.m.Params[k]
		if p.R0 != 0 || p.C0 != 0 || p.R1 != p.Rows || p.C1 != p.Cols || p.Name != q.Name {
			panic(fmt.Sprintf("jobs: isolated parameter %s is not whole on its worker (%d:%d × %d:%d of %d×%d)", p.Name, p.R0, p.R1, p.C0, p.C1, p.Rows, p.Cols))
		}
		if cap(e.whole) < p.Len() {
			e.whole = make([]float32, p.Len())
		}
		e.whole = e.whole[:p.Len()]
		p.Download(e.whole)
		block := make([]float32, 0, q.Len())
		for i := q.R0; i < q.R1; i++ {
			block = append(block, e.whole[i*p.Cols+q.C0:i*p.Cols+q.C1]...)
		}
		q.Upload(block)
	}
}

// bytes is what this rank has handed to the evaluation grid's
// collectives (the model's evaluation uses its X, Y and Z communicators).
func (e *isolatedEval) bytes() int64 {
	var b int64
	for _, c := range []collectives.Comm{e.g.XComm, e.g.YComm, e.g.ZComm} {
		b += c.Counters().TotalBytes()
	}
	return b
}
