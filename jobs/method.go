package jobs

import (
	"time"

	"scalegnn/checkpoint"
	"scalegnn/gcn"
)

// Method is one way of training — 3D full-graph, 4D mini-batch, neighbor
// sampling, isolated partitions, 1.5D full-graph and mini-batch — as the
// one epoch loop (Job.Train, jobs/loop.go) drives it. Each is set up by
// its registration (jobs/registry.go) and owns its model, its batches and
// its communicators; the loop owns everything else: the evaluation rule,
// the watchdog stages, signals, checkpoints, divergence, the target
// accuracy and patience, and the metrics.
//
// Every call is collective over the job's ranks unless it says otherwise.
type Method interface {
	// StepsPerEpoch is the optimizer steps of one epoch (1 for full-graph
	// training).
	StepsPerEpoch() int
	// Start prepares training from optimizer step `step` after `epochs`
	// completed epochs, once, before the first Step: batches are functions
	// of the step (a resumed run's sampling starts there), and isolated
	// training's partitions of the epoch.
	Start(step, epochs int) error
	// Step takes optimizer step `step` and returns this rank's loss: its
	// replica's, the same on every rank of a replica.
	Step(step int) (float64, error)
	// BeginEpoch starts an epoch's time split (local).
	BeginEpoch()
	// EndEpoch is called after an epoch's last step, before its
	// evaluation.
	EndEpoch()
	// Evaluate returns the full-graph accuracy, without dropout, and the
	// bytes the evaluation handed to collectives that Counters does not
	// count (0 where Counters counts them).
	Evaluate() (gcn.Accuracy, int64, error)
	// Counters returns the bytes this rank has handed so far to the
	// collectives of its model-parallel group (the 3D grid, or 1.5D's
	// process rows and columns) and of its data-parallel group.
	Counters() [2]int64
	// Split returns where the steps since BeginEpoch went, given their
	// wall time train (local).
	Split(train time.Duration) Split
	// Close releases what the method started (prefetching goroutines).
	Close()

	keeper
	predictor
}

// Split is where one rank's training steps of an epoch went, beyond the
// wall time: the metrics' spmm_s, gemm_s, comm_s and dp_s, the wait for
// and the building of batches, the 3D-PMM bytes and isolated mode's chunk
// loads.
type Split struct {
	SpMM, GEMM, Comm, DP    time.Duration
	SampleWait, SampleBuild time.Duration
	PMMBytes, ChunkBytes    int64
}

// keeper is what a checkpoint keeps and restores of a method's model
// (jobs/checkpoint.go writes the manifest and the run's bookkeeping).
type keeper interface {
	// Fingerprint is the dataset's fingerprint as the model holds it.
	Fingerprint() (gcn.Fingerprint, error)
	// ModelConfig is the model's configuration.
	ModelConfig() gcn.Config
	// GridName is where a checkpoint says it was written.
	GridName() string
	// OptimizerSteps is the optimizer steps the model has taken (local).
	OptimizerSteps() int
	// SaveParams writes the parameters and optimizer moments with man and
	// config as a checkpoint in root.
	SaveParams(root string, keep int, man checkpoint.Manifest, config []byte) (string, error)
	// LoadParams restores them, and the optimizer's step count, from dir.
	LoadParams(dir string, man *checkpoint.Manifest) error
}

// predictor is what scalegnn predict runs: the trained model on the full
// graph without dropout.
type predictor interface {
	// Probabilities is this rank's block of the class probabilities
	// (N × classes, rows by original vertex id).
	Probabilities() (gcn.Block, error)
	// Embeddings is Probabilities for hidden layer l's output.
	Embeddings(l int) (gcn.Block, error)
	// Vertices is the number of vertices of the graph (local).
	Vertices() int
}
