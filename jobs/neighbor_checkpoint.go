package jobs

import (
	"scalegnn/cagnet"
	"scalegnn/checkpoint"
	"scalegnn/gcn"
	"scalegnn/neighbor"
)

// How the checkpoint functions (checkpoint.go) reach the model: a
// sharded gcn.Model is written block by block by checkpoint.Save; the
// neighbor mode's model and the 1.5D model (jobs/cagnet_keep.go), whole
// on every rank, by checkpoint.SaveReplicated in the same layout. The
// manifest, the run's bookkeeping, -resume and the compatibility check
// are the same for all.

// neighborFingerprint is the neighbor mode's dataset fingerprint (package
// neighbor's hash of its blocks), computed once, collectively.
func (j *Job) neighborFingerprint() (checkpoint.Dataset, error) {
	if j.dataset == nil {
		n, nnz, f, l, err := j.nb.graph.Fingerprint(j.world)
		if err != nil {
			return checkpoint.Dataset{}, err
		}
		d := checkpoint.DatasetOf(gcn.Fingerprint{N: n, NNZ: nnz, Features: f, Labels: l}, j.Cfg.Permute.Scheme.String(), j.Cfg.Permute.Seed)
		j.dataset = &d
	}
	return *j.dataset, nil
}

// optimizerSteps returns the optimizer steps the job's model has taken.
func (j *Job) optimizerSteps() int {
	if j.ca != nil {
		return j.ca.OptimizerSteps()
	}
	if j.nb != nil {
		return j.nb.model.OptimizerSteps()
	}
	return j.Model.OptimizerSteps()
}

// modelConfig returns the job's model configuration.
func (j *Job) modelConfig() gcn.Config {
	if j.ca != nil {
		return j.ca.Config()
	}
	if j.nb != nil {
		return j.nb.model.Cfg
	}
	return j.Model.Cfg
}

// saveParams writes the model's parameters and optimizer moments with
// man and config as a checkpoint in root, collectively.
func (j *Job) saveParams(root string, keep int, man checkpoint.Manifest, config []byte) (string, error) {
	if m := j.replicatedModel(); m != nil {
		return checkpoint.SaveReplicated(j.world, root, keep, replicatedParams(m, true), man, config)
	}
	return checkpoint.Save(j.world, root, keep, j.Model, man, config)
}

// loadParams restores the model's parameters, moments and optimizer steps
// from the checkpoint in dir, collectively.
func (j *Job) loadParams(dir string, man *checkpoint.Manifest) error {
	m := j.replicatedModel()
	if m == nil {
		return checkpoint.Load(j.world, dir, j.Model, man)
	}
	params := replicatedParams(m, false)
	if err := checkpoint.LoadReplicated(j.world, dir, man, params); err != nil {
		return err
	}
	for k, p := range params {
		m.UploadParam(k, p.W, p.M, p.V)
	}
	m.SetOptimizerSteps(man.OptimizerStep)
	return nil
}

var (
	_ replicatedModel = (*cagnet.Model)(nil)
	_ replicatedModel = (*neighbor.Model)(nil)
)

// replicatedModel is a model every rank holds whole (neighbor mode's,
// 1.5D's): what its checkpoint reads and writes.
type replicatedModel interface {
	ParamCount() int
	ParamShape(k int) (name string, rows, cols int)
	DownloadParam(k int, w, m, v []float32)
	UploadParam(k int, w, m, v []float32)
	SetOptimizerSteps(t int)
}

// replicatedModel returns the job's replicated model, or nil when its
// model is a sharded gcn.Model.
func (j *Job) replicatedModel() replicatedModel {
	switch {
	case j.ca != nil: // 1.5D: jobs/cagnet_keep.go
		return j.ca
	case j.nb != nil:
		return j.nb.model
	}
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
