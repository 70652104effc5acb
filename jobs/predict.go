package jobs

import (
	"scalegnn/gcn"
)

// Probabilities runs the job's model on the full graph without dropout
// and returns this rank's block of the class probabilities (N × classes,
// rows by original vertex id), collectively: what scalegnn predict writes.
func (j *Job) Probabilities() (gcn.Block, error) { return j.method.Probabilities() }

// Embeddings is Probabilities for hidden layer l's output.
func (j *Job) Embeddings(l int) (gcn.Block, error) { return j.method.Embeddings(l) }

// Vertices is the number of vertices of the job's graph (the rows of
// Probabilities' and Embeddings' output).
func (j *Job) Vertices() int { return j.method.Vertices() }
