package perfmodel

import (
	"math"

	"scalegnn/grid"
)

// gatEdgeArrays is how many per-edge arrays (nnz × K float32 each) a GAT
// layer keeps for a pass: the scores, overwritten by α; in training α
// with attention dropout (when the job drops) and dα.
func (j Job) gatEdgeArrays(training bool) int {
	if !training {
		return 1
	}
	if j.Dropout > 0 {
		return 3
	}
	return 2
}

// gatEdgeBytes is the bytes of the per-edge arrays of every GAT layer of
// a pass on the tracer's blocks: the shard block's nonzeros × K heads ×
// the arrays (gatEdgeArrays) × 4. They live per layer, beside the arena,
// because the backward pass reads the forward's α.
func (j Job) gatEdgeBytes(t *tracer, training bool) int64 {
	var b int64
	for l, sp := range j.layers() {
		if sp.heads == 0 {
			continue
		}
		p, _, r := grid.Rotation(l)
		b += 4 * int64(j.gatEdgeArrays(training)) * int64(sp.heads) * int64(math.Round(t.localNNZ(l, r, p)))
	}
	return b
}
