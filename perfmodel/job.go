package perfmodel

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
)

// Job is what the model needs to know about a training job.
type Job struct {
	// N is the number of vertices; NNZ the nonzeros of the normalised
	// adjacency, self loops included.
	N   int
	NNZ int64
	// Features is the input width, Hidden the hidden width, Classes the
	// output width, Layers the number of graph convolutions.
	Features, Hidden, Classes, Layers int
	// Model options, as in gcn.Config.
	InputProjection, OutputHead, Norm, Residual bool
	// Layer is the graph layer: a SAGE layer (gcn.SAGELayer) aggregates
	// with D^-1 A, NNZ − N nonzeros (no self loops), and adds W_self's
	// products and the input's redistribution both ways.
	Layer gcn.Layer
	// Heads and OutputHeads are a GAT layer's attention heads (Layer =
	// gcn.GATLayer), as in gcn.Config: Heads in every hidden layer, whose
	// width is then Heads·Hidden, OutputHeads in a last layer that outputs
	// the classes. 0 means 1; other layers ignore them.
	Heads, OutputHeads int
	// Dropout is the dropout probability (a training pass with dropout
	// keeps a masked copy of each layer input; a GAT layer drops
	// attention coefficients too).
	Dropout float64

	Mode gcn.Mode
	// BatchSize is B, the vertices sampled per step in gcn.MiniBatch mode.
	BatchSize int
	// StepsPerEpoch in gcn.MiniBatch mode; 0 means ceil(N/B).
	StepsPerEpoch int
	// CommDType is the element type of the 3D-PMM all-reduces.
	CommDType collectives.DType
	// Precision is the products' arithmetic (train.precision): with
	// device.BF16 the device stages their operands in bfloat16
	// (Memory.Staging).
	Precision device.Precision
	// NoOverlap is train.overlap = false: the backward pass computes dW
	// before dH is summed, so dH reuses H's memory on every grid, not only
	// where P is one rank (gcn's backward buffer reuse).
	NoOverlap bool
	// Permutation decides how many adjacency shards a rank keeps and
	// whether the residual's redistribution reorders rows.
	Permutation permute.Scheme
	// EvalEvery: a full-graph evaluation (forward pass and accuracy) runs
	// every EvalEvery epochs; its cost is spread over the epochs. 0 means
	// no evaluation.
	EvalEvery int
	// Imbalance is the max/mean nonzeros over the adjacency blocks (the
	// statistic of scalegnn balance); the largest block sets the SpMM time.
	// 0 means 1 (perfect balance, about what double permutation gives).
	Imbalance float64
	// ShardedLoad is true when every rank reads only its own shards (a
	// prepared dataset); false when every rank first holds the whole graph,
	// which then counts toward its peak memory.
	ShardedLoad bool
	// FeatureBytes is the bytes a feature takes where it is read from
	// disk (a prepared dataset's feature_dtype: 2 for bfloat16); 0 means
	// 4 (float32). Features in memory are float32 either way.
	FeatureBytes int
	// Neighbor describes a train.mode = "neighbor" job (PredictNeighbor).
	Neighbor NeighborJob
	// Isolated describes a train.mode = "isolated" job (PredictIsolated).
	Isolated IsolatedJob
}

// Validate reports the first field that makes the job impossible to model.
func (j Job) Validate() error {
	switch {
	case j.N < 1:
		return fmt.Errorf("perfmodel: job has %d vertices: need at least 1", j.N)
	case j.NNZ < 0:
		return fmt.Errorf("perfmodel: job has %d nonzeros: need at least 0", j.NNZ)
	case j.Features < 1 || j.Classes < 1:
		return fmt.Errorf("perfmodel: job has %d features and %d classes: both must be at least 1", j.Features, j.Classes)
	case j.Layers < 1:
		return fmt.Errorf("perfmodel: job has %d layers: need at least 1", j.Layers)
	case j.Hidden < 1 && (j.Layers > 1 || j.InputProjection || j.OutputHead):
		return fmt.Errorf("perfmodel: job has hidden width %d: need at least 1", j.Hidden)
	case j.Residual && !j.InputProjection:
		return fmt.Errorf("perfmodel: a residual job needs an input projection")
	case j.Heads < 0 || j.OutputHeads < 0:
		return fmt.Errorf("perfmodel: job has %d heads and %d output heads: expected 0 (one head) or more", j.Heads, j.OutputHeads)
	case j.Layer == gcn.GATLayer && (j.Norm || j.Residual):
		return fmt.Errorf("perfmodel: a GAT job has no norm or residual (gcn.Config refuses them)")
	case j.Mode == gcn.MiniBatch && (j.BatchSize < 1 || j.BatchSize > j.N):
		return fmt.Errorf("perfmodel: batch size %d: expected an integer in [1, N = %d]", j.BatchSize, j.N)
	case j.StepsPerEpoch < 0 || j.EvalEvery < 0:
		return fmt.Errorf("perfmodel: steps per epoch %d and eval every %d must not be negative", j.StepsPerEpoch, j.EvalEvery)
	case j.Imbalance != 0 && !(j.Imbalance >= 1 && !math.IsInf(j.Imbalance, 0)):
		return fmt.Errorf("perfmodel: imbalance %v: expected max/mean >= 1", j.Imbalance)
	}
	return nil
}

// CheckRanks refuses more ranks than the graph has vertices, the one bound
// on the ranks the model searches: beyond it every rank would hold less
// than one vertex's work, and the grids to rank (every factorisation of
// the ranks) only multiply, so that the search would run for minutes to
// recommend a grid no one should run.
func (j Job) CheckRanks(ranks int) error {
	if ranks > j.N {
		return fmt.Errorf("perfmodel: %d ranks for a graph of %d vertices: more ranks than vertices leave every rank less than one vertex of work; choose at most %d ranks", ranks, j.N, j.N)
	}
	return nil
}

// Steps returns the training steps of one epoch.
func (j Job) Steps() int {
	if j.Mode != gcn.MiniBatch {
		return 1
	}
	if j.StepsPerEpoch > 0 {
		return j.StepsPerEpoch
	}
	return (j.N + j.BatchSize - 1) / j.BatchSize
}

// stepRows is the number of vertices one training step works on.
func (j Job) stepRows() int {
	if j.Mode == gcn.MiniBatch {
		return j.BatchSize
	}
	return j.N
}

// stepNNZ is the expected number of nonzeros of the adjacency a step
// multiplies by: all of them in full-graph training; in a vertex-induced
// sample of B vertices, an off-diagonal entry survives when both ends are
// sampled, with probability B(B-1)/(N(N-1)), and the B self loops stay.
func (j Job) stepNNZ() float64 {
	if j.Mode != gcn.MiniBatch || j.BatchSize >= j.N {
		return j.adjNNZ()
	}
	n, b := float64(j.N), float64(j.BatchSize)
	off := math.Max(0, float64(j.NNZ)-n)
	if j.Layer == gcn.SAGELayer {
		return off * b * (b - 1) / (n * (n - 1))
	}
	return off*b*(b-1)/(n*(n-1)) + b
}

// adjNNZ is the nonzeros of the full graph's aggregation matrix: Â's, or
// for SAGE D^-1 A's, which lacks the N self loops.
func (j Job) adjNNZ() float64 {
	if j.Layer == gcn.SAGELayer {
		return math.Max(0, float64(j.NNZ)-float64(j.N))
	}
	return float64(j.NNZ)
}

func (j Job) imbalance() float64 {
	if j.Imbalance == 0 {
		return 1
	}
	return j.Imbalance
}

// layerSpec is one GCN layer's widths and options, as package gcn
// derives them.
type layerSpec struct {
	in, out                int
	hidden, norm, residual bool
	needInputGrad          bool
	self                   bool
	// heads > 0 marks a GAT layer (gcn.LayerSpec.Heads); proj is the
	// width C of its projection Y = H·W, every head side by side
	// (gcn.LayerSpec.ProjWidth).
	heads, proj int
}

// gcnConfig is the job's model as package gcn configures it.
func (j Job) gcnConfig() gcn.Config {
	return gcn.Config{Features: j.Features, Hidden: j.Hidden, Classes: j.Classes, Layers: j.Layers,
		InputProjection: j.InputProjection, OutputHead: j.OutputHead, Norm: j.Norm, Residual: j.Residual,
		Dropout: j.Dropout, Layer: j.Layer, Heads: j.Heads, OutputHeads: j.OutputHeads}
}

func (j Job) layers() []layerSpec {
	var specs []layerSpec
	for _, s := range j.gcnConfig().LayerSpecs() {
		specs = append(specs, layerSpec{in: s.In, out: s.Out, hidden: s.Hidden, norm: s.Norm, residual: s.Residual,
			needInputGrad: s.NeedInputGrad, self: s.Self, heads: s.Heads, proj: s.ProjWidth})
	}
	return specs
}

// shardKeys returns the distinct adjacency shards the job's layers use
// (grid.ShardFor: at most six with double permutation, three otherwise) and
// whether each one's transpose is kept: where backward multiplies by Âᵀ
// (an input gradient), and for every GAT layer, whose backward needs the
// transpose for dY = αᵀ·dO and dt even without an input gradient (dW
// needs dY).
func (j Job) shardKeys() (keys []grid.Shard, transposed map[grid.Shard]bool) {
	transposed = map[grid.Shard]bool{}
	two := j.Permutation == permute.Double
	keys = grid.ShardsOf(j.Layers, two)
	for l, s := range j.layers() {
		if s.needInputGrad || s.heads > 0 {
			transposed[grid.ShardFor(l, two)] = true
		}
	}
	return keys, transposed
}

// headIn is the output head's input width: the last graph layer's output
// (Hidden, or Heads·Hidden for GAT, gcn/params.go's "head").
func (j Job) headIn() int {
	specs := j.layers()
	return specs[len(specs)-1].out
}

// isGAT reports whether the job's graph layers are GAT layers.
func (j Job) isGAT() bool { return j.Layer == gcn.GATLayer }

// featureBytes is FeatureBytes with its default.
func (j Job) featureBytes() float64 {
	if j.FeatureBytes > 0 {
		return float64(j.FeatureBytes)
	}
	return 4
}
