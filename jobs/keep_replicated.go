package jobs

import (
	"scalegnn/cagnet"
	"scalegnn/checkpoint"
	"scalegnn/collectives"
	"scalegnn/neighbor"
)

// How a model every rank holds whole (neighbor mode's, 1.5D's) is kept:
// checkpoint.SaveReplicated writes it in checkpoint.Save's layout, so
// such a checkpoint loads into a sharded 3D model too, and back. The
// manifest, the run's bookkeeping, -resume and the compatibility check
// are the same as for every method (jobs/checkpoint.go).

var (
	_ replicatedModel = (*cagnet.Model)(nil)
	_ replicatedModel = (*neighbor.Model)(nil)
)

// replicatedModel is a model every rank holds whole: what its checkpoint
// reads and writes.
type replicatedModel interface {
	ParamCount() int
	ParamShape(k int) (name string, rows, cols int)
	DownloadParam(k int, w, m, v []float32)
	UploadParam(k int, w, m, v []float32)
	OptimizerSteps() int
	SetOptimizerSteps(t int)
}

// replicated implements a method's parameter keeping for a replicated
// model; methods embed it.
type replicated struct {
	comm  collectives.Comm // the world
	model replicatedModel
}

func (r replicated) OptimizerSteps() int { return r.model.OptimizerSteps() }

func (r replicated) SaveParams(root string, keep int, man checkpoint.Manifest, config []byte) (string, error) {
	return checkpoint.SaveReplicated(r.comm, root, keep, replicatedParams(r.model, true), man, config)
}

func (r replicated) LoadParams(dir string, man *checkpoint.Manifest) error {
	params := replicatedParams(r.model, false)
	if err := checkpoint.LoadReplicated(r.comm, dir, man, params); err != nil {
		return err
	}
	for k, p := range params {
		r.model.UploadParam(k, p.W, p.M, p.V)
	}
	r.model.SetOptimizerSteps(man.OptimizerStep)
	return nil
}

// replicatedParams returns m's parameters as a checkpoint holds them,
// with their values when download is set (else zeroed, to load into).
func replicatedParams(m replicatedModel, download bool) []checkpoint.Replicated {
	params := make([]checkpoint.Replicated, m.ParamCount())
	for k := range params {
		name, rows, cols := m.ParamShape(k)
		n := rows * cols
		params[k] = checkpoint.Replicated{Name: name, Rows: rows, Cols: cols, W: make([]float32, n), M: make([]float32, n), V: make([]float32, n)}
		if download {
			m.DownloadParam(k, params[k].W, params[k].M, params[k].V)
		}
	}
	return params
}
