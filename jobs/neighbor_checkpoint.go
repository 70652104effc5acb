package jobs

import (
	"scalegnn/checkpoint"
	"scalegnn/gcn"
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
	if j.ca != nil { // 1.5D: jobs/cagnet_keep.go
		return checkpoint.SaveReplicated(j.world, root, keep, j.cagnetReplicated(true), man, config)
	}
	if j.nb == nil {
		return checkpoint.Save(j.world, root, keep, j.Model, man, config)
	}
	return checkpoint.SaveReplicated(j.world, root, keep, j.nb.replicated(true), man, config)
}

// loadParams restores the model's parameters, moments and optimizer steps
// from the checkpoint in dir, collectively.
func (j *Job) loadParams(dir string, man *checkpoint.Manifest) error {
	if j.ca != nil {
		return j.loadCAGNET(dir, man)
	}
	if j.nb == nil {
		return checkpoint.Load(j.world, dir, j.Model, man)
	}
	params := j.nb.replicated(false)
	if err := checkpoint.LoadReplicated(j.world, dir, man, params); err != nil {
		return err
	}
	for k, p := range params {
		j.nb.model.UploadParam(k, p.W, p.M, p.V)
	}
	j.nb.model.SetOptimizerSteps(man.OptimizerStep)
	return nil
}

// replicated returns the neighbor model's parameters as a checkpoint
// holds them, with their values when download is set (else zeroed, to
// load into).
func (nr *neighborRun) replicated(download bool) []checkpoint.Replicated {
	var out []checkpoint.Replicated
	for k, p := range nr.model.Params {
		n := p.Rows * p.Cols
		r := checkpoint.Replicated{Name: p.Name, Rows: p.Rows, Cols: p.Cols, W: make([]float32, n), M: make([]float32, n), V: make([]float32, n)}
		if download {
			nr.model.DownloadParam(k, r.W, r.M, r.V)
		}
		out = append(out, r)
	}
	return out
}
