package jobs

import (
	"fmt"

	"scalegnn/gcn"
	"scalegnn/perfmodel"
)

// How a 1.5D job (package cagnet) is kept: its checkpoints are the 3D
// job's (jobs/checkpoint.go: the same manifest, run bookkeeping, -resume
// and compatibility check), with its parameters, replicated on every
// rank, written by checkpoint.SaveReplicated in Save's layout, so that a
// checkpoint moves between 1.5D and 3D and between any (P, c). The
// dataset fingerprint is the one gcn computes (cagnet.Model.Fingerprint).
// scalegnn predict runs the 1.5D model itself (Probabilities, Embeddings).

// fullFingerprint is the full-graph model's gcn.Fingerprint, collectively.
func (j *Job) fullFingerprint() (gcn.Fingerprint, error) {
	if j.ca != nil {
		// Over one replica's ranks: each of a 1.5D mini-batch job's
		// grid.d replicas holds the whole graph (the cube is the world
		// when d = 1).
		return j.ca.Fingerprint(j.Grid.Cube)
	}
	return j.Model.Fingerprint()
}

// gridName is where a checkpoint says it was written: the 3D/4D grid, or
// the 1.5D arrangement as the performance model names it.
func (j *Job) gridName() string {
	if j.ca != nil {
		return perfmodel.CAGNETBatchGrid(j.Grid.Shape.D, j.ca.L.P, j.ca.L.C) // "1.5d QxC", with d= for replicas
	}
	return j.Grid.Shape.String()
}

// Probabilities runs the job's model on the full graph without dropout
// and returns this rank's block of the class probabilities (N × classes,
// rows by original vertex id), collectively: what scalegnn predict writes.
func (j *Job) Probabilities() (gcn.Block, error) {
	switch {
	case j.ca != nil:
		return j.ca.Probabilities()
	case j.Model != nil:
		return j.Model.Probabilities()
	}
	return gcn.Block{}, j.noPredict()
}

// Embeddings is Probabilities for hidden layer l's output.
func (j *Job) Embeddings(l int) (gcn.Block, error) {
	switch {
	case j.ca != nil:
		return j.ca.Embeddings(l)
	case j.Model != nil:
		return j.Model.Embeddings(l)
	}
	return gcn.Block{}, j.noPredict()
}

// Vertices is the number of vertices of the job's graph (the rows of
// Probabilities' and Embeddings' output).
func (j *Job) Vertices() int {
	if j.ca != nil {
		return j.ca.Vertices()
	}
	if j.Model != nil {
		return j.Model.Shards().N
	}
	return 0
}

func (j *Job) noPredict() error {
	return fmt.Errorf("%s: scalegnn predict runs full-graph models (train.mode = %q has none): set train.mode = \"fullgraph\" in the job file given to predict; the checkpoint loads on any grid", j.Cfg.label(), j.Cfg.Train.Mode)
}
