package grappa

// StepsPerEpoch is the steps of one isolated-mode epoch with batch
// training vertices a step (0: the whole partition, one step) on chunks
// chunks of a graph with train training vertices: steps when it is given
// (> 0), else enough batches to cover a partition's expected ⌈2T/C⌉
// training vertices once (T with one chunk). It is the same on every
// worker and super-epoch, since the workers all-reduce every step; jobs
// runs it and perfmodel predicts it.
func StepsPerEpoch(train, chunks, batch, steps int) int {
	switch {
	case batch == 0:
		return 1
	case steps > 0:
		return steps
	}
	per := train
	if chunks > 1 {
		per = (2*train + chunks - 1) / chunks
	}
	return max(1, (per+batch-1)/batch)
}
