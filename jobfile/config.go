package jobfile

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/internal/tomlx"
	"scalegnn/internal/watchdog"
	"scalegnn/method"
	"scalegnn/perfmodel"
	"scalegnn/permute"
	"scalegnn/prepared"
)

// Dataset sources.
const (
	SourceCora      = "cora"
	SourceCiteseer  = "citeseer"
	SourcePlanetoid = "planetoid"
	SourceSBM       = "sbm"
	SourceRMAT      = "rmat"
	// SourcePrepared is a dataset written by scalegnn prepare (package
	// prepared): every rank reads only its shards.
	SourcePrepared = "prepared"
)

// Optimizers.
const (
	OptimizerAdam  = "adam"
	OptimizerAdamW = "adamw"
	OptimizerSGD   = "sgd"
)

// Early-stopping rules (train.early_stop).
const (
	// EarlyStopValAcc: the patience counter resets at a higher validation
	// accuracy, and the kept model (best_epoch) is the first highest.
	EarlyStopValAcc = "val_acc"
	// EarlyStopValLossAcc is the GAT paper's rule: the counter resets when
	// the validation accuracy is >= its best or the validation loss <= its
	// lowest, and the model is kept when both hold.
	EarlyStopValLossAcc = "val_loss_acc"
)

// Config is a job: what to train on, the model, how to train it, the process
// grid and where results go. Its toml tags are the job file's keys; see
// docs/jobfile.md.
type Config struct {
	// Path is the file the configuration was read from. Error messages name
	// it, and a relative dataset.path was resolved against its directory.
	Path string `toml:"-"`

	Dataset   DatasetConfig   `toml:"dataset"`
	Model     ModelConfig     `toml:"model"`
	Optimizer OptimizerConfig `toml:"optimizer"`
	Train     TrainConfig     `toml:"train"`
	Grid      GridConfig      `toml:"grid"`
	Permute   PermuteConfig   `toml:"permute"`
	Output    OutputConfig    `toml:"output"`
	Runtime   RuntimeConfig   `toml:"runtime"`
	// Checkpoint is [checkpoint] (jobs/checkpoint.go).
	Checkpoint CheckpointConfig `toml:"checkpoint"`
	// Grappa is [grappa], read in train.mode = "isolated"
	// (isolated_config.go).
	Grappa GrappaConfig `toml:"grappa"`
}

// DatasetConfig selects the graph. SBM and RMAT are read only when Source
// selects them.
type DatasetConfig struct {
	// Source is one of SourceCora, SourceCiteseer, SourcePlanetoid,
	// SourceSBM or SourceRMAT.
	Source string `toml:"source"`
	// Path is the Planetoid or prepared dataset directory. ParseConfig makes a relative path
	// relative to the job file's directory.
	Path string `toml:"path"`
	// NormalizeFeatures row-normalises the features (Kipf & Welling).
	// ParseConfig turns its default off for the generators (sbm, rmat)
	// and for a prepared dataset made from them.
	NormalizeFeatures bool `toml:"normalize_features"`
	// Seed seeds the sbm and rmat generators.
	Seed int64 `toml:"seed"`
	// SBM and RMAT are the generators' own configs: their toml tags are
	// the keys of [dataset.sbm] and [dataset.rmat], and package dataset
	// validates them. Use SBMConfig and RMATConfig, which add the fields a
	// job file does not set in the table.
	SBM  dataset.SBMConfig  `toml:"sbm"`
	RMAT dataset.RMATConfig `toml:"rmat"`
}

// SBMConfig returns the SBM generator's config: [dataset.sbm] seeded with
// dataset.seed.
func (d DatasetConfig) SBMConfig() dataset.SBMConfig {
	c := d.SBM
	c.Seed = uint64(d.Seed)
	return c
}

// RMATConfig returns the R-MAT generator's config: [dataset.rmat] seeded
// with dataset.seed, with d = 1 - a - b - c.
func (d DatasetConfig) RMATConfig() dataset.RMATConfig {
	c := d.RMAT
	c.D = 1 - c.A - c.B - c.C
	c.Seed = uint64(d.Seed)
	return c
}

// ModelConfig describes the GCN.
type ModelConfig struct {
	// Layers is the number of GCN layers.
	Layers int `toml:"layers"`
	Hidden int `toml:"hidden"`
	// Dropout is the probability of zeroing an activation while training.
	Dropout float64 `toml:"dropout"`
	// InputProjection adds a dense layer features → hidden before the GCN
	// layers.
	InputProjection bool `toml:"input_projection"`
	// OutputHead adds a dense layer hidden → classes after the GCN layers.
	OutputHead bool `toml:"output_head"`
	// Norm is gcn.NoNorm ("none") or gcn.RMSNorm ("rms").
	Norm gcn.Norm `toml:"norm"`
	// Residual adds each GCN layer's input to its output; it needs
	// InputProjection so that the layers are hidden → hidden.
	Residual bool `toml:"residual"`
	// Layer is the graph layer: gcn.GCNLayer ("gcn", Kipf & Welling),
	// gcn.SAGELayer ("sage", GraphSAGE-mean) or gcn.GATLayer ("gat",
	// graph attention).
	Layer gcn.Layer `toml:"layer"`
	// Heads and OutputHeads are a GAT model's attention heads in the hidden
	// layers (concatenated: a hidden layer is Heads·Hidden wide) and in the
	// last layer (averaged).
	Heads       int `toml:"heads"`
	OutputHeads int `toml:"output_heads"`
}

// OptimizerConfig describes the optimizer.
type OptimizerConfig struct {
	// Name is OptimizerAdam (L2 weight decay added to the gradient),
	// OptimizerAdamW (decoupled weight decay) or OptimizerSGD.
	Name        string  `toml:"name"`
	LR          float64 `toml:"lr"`
	WeightDecay float64 `toml:"weight_decay"`
	Beta1       float64 `toml:"beta1"`
	Beta2       float64 `toml:"beta2"`
	Eps         float64 `toml:"eps"`
}

// TrainConfig describes the training loop.
type TrainConfig struct {
	// Mode is gcn.FullGraph ("fullgraph": one step per epoch on the whole
	// graph) or gcn.MiniBatch ("minibatch": uniform vertex sampling,
	// ScaleGNN).
	Mode   gcn.Mode `toml:"mode"`
	Epochs int      `toml:"epochs"`
	// Algorithm is the full-graph parallel algorithm: "3d" (Plexus, the
	// default when empty) or "1.5d" (CAGNET, jobs/method_cagnet.go).
	Algorithm method.Algorithm `toml:"algorithm"`
	// BatchSize is the number of vertices per mini-batch; BatchRatio gives
	// it as a fraction of the vertices instead. Exactly one of them is set
	// in mini-batch mode, neither in full-graph mode.
	BatchSize  int     `toml:"batch_size"`
	BatchRatio float64 `toml:"batch_ratio"`
	// StepsPerEpoch is the number of mini-batch steps per epoch; 0 means
	// ceil(N / batch size), enough batches to cover the vertices once per
	// data-parallel group.
	StepsPerEpoch int `toml:"steps_per_epoch"`
	// Prefetch builds the next mini-batch while the current one trains.
	Prefetch bool `toml:"prefetch"`
	// Fanouts are the neighbours sampled per vertex in each layer, first
	// layer first, in neighbor mode (one per model layer, each >= 1);
	// there BatchSize is the seeds per rank per step.
	Fanouts []int `toml:"fanouts"`
	// CommDtype is collectives.Float32 ("float32") or collectives.BF16
	// ("bf16": the 3D-PMM partial sums travel as bfloat16; norm, loss and
	// data-parallel reductions stay float32).
	CommDtype collectives.DType `toml:"comm_dtype"`
	// Precision is the products' arithmetic: device.Float32 ("float32")
	// or device.BF16 ("bf16": every SpMM and GEMM reads its dense
	// operands rounded to bfloat16 and sums in float32; storage, weights,
	// optimizer, loss and reductions stay float32; see docs/bf16.md).
	Precision device.Precision `toml:"precision"`
	// Overlap issues the backward all-reduces on orthogonal groups
	// nonblocking, overlapping them with the local GEMM and SpMM.
	Overlap bool `toml:"overlap"`
	// EvalEvery evaluates validation and test accuracy every EvalEvery
	// epochs and at the last epoch.
	EvalEvery int `toml:"eval_every"`
	// Seed seeds parameter initialisation and dropout.
	Seed int64 `toml:"seed"`
	// TargetAcc stops training at the first evaluation whose validation
	// accuracy reaches it (summary.json records the time to it); 0: no
	// target.
	TargetAcc float64 `toml:"target_acc"`
	// Patience stops training after that many evaluations without a
	// higher validation accuracy; 0: never.
	Patience int `toml:"patience"`
	// EarlyStop is the rule Patience counts by and that picks the kept
	// model (EarlyStopValAcc, EarlyStopValLossAcc).
	EarlyStop string `toml:"early_stop"`
}

// GridConfig is the process grid: D data-parallel replicas of an X×Y×Z grid.
type GridConfig struct {
	X int `toml:"x"`
	Y int `toml:"y"`
	Z int `toml:"z"`
	D int `toml:"d"`
	// Replication is c of train.algorithm = "1.5d": P = x·y·z ranks as
	// P/c process rows × c replicas (0 or 1: none).
	Replication int `toml:"replication"`
	// Auto chooses X, Y, Z (and D in mini-batch training) at start-up with
	// the performance model: the fastest predicted grid of the launch's
	// ranks that fits in MemPerRank. Machine and RanksPerNode are used
	// only with Auto.
	Auto bool `toml:"auto"`
	// Machine is a profile written by scalegnn perfmodel calibrate, or the
	// name of a built-in profile; empty: the built-in defaults.
	Machine string `toml:"machine"`
	// MemPerRank limits the memory per rank, e.g. "40GiB"; empty: no limit
	// beyond the machine's. grid.auto chooses a grid that fits in it, and
	// the memory check before loading (runtime.mem_check) refuses a grid
	// that does not.
	MemPerRank string `toml:"mem_per_rank"`
	// RanksPerNode overrides the ranks per node the launcher announces.
	RanksPerNode int `toml:"ranks_per_node"`
}

// Ranks returns D·X·Y·Z, saturating at math.MaxInt.
func (g GridConfig) Ranks() int {
	n := 1
	for _, v := range []int{g.X, g.Y, g.Z, g.D} {
		if v <= 0 {
			return 0
		}
		if n > math.MaxInt/v {
			return math.MaxInt
		}
		n *= v
	}
	return n
}

// PermuteConfig selects the vertex permutation that balances nonzeros.
type PermuteConfig struct {
	Scheme permute.Scheme `toml:"scheme"`
	Seed   int64          `toml:"seed"`
}

// OutputConfig says where results go.
type OutputConfig struct {
	// Dir is created if missing; a relative Dir is relative to the current
	// working directory.
	Dir string `toml:"dir"`
	// Metrics is the metrics file name, relative to Dir.
	Metrics string `toml:"metrics"`
	// Overwrite lets a run replace the run already in Dir (its
	// config.toml, summary.json and metrics file); without it such a
	// directory is refused.
	Overwrite bool `toml:"overwrite"`
	// SaveModel writes the final model as a checkpoint in Dir/model, for
	// scalegnn predict.
	SaveModel bool `toml:"save_model"`
}

// RuntimeConfig tunes the local kernels and the job's guards.
type RuntimeConfig struct {
	// Threads is the number of kernel goroutines per rank; 0 leaves the
	// choice to the caller (GOMAXPROCS divided by the ranks on the node).
	Threads int `toml:"threads"`
	// StallTimeout is how long a rank may make no progress (a load, step
	// or evaluation completing) before its watchdog ends the job: a
	// duration such as "20s", "auto" (the adaptive limit of
	// watchdog.DefaultPolicy) or "off".
	StallTimeout string `toml:"stall_timeout"`
	// MemCheck refuses, before loading, a job whose predicted peak memory
	// per rank exceeds what the rank may use (CheckMemory), and with a
	// GPU, before setting up, one whose predicted device memory exceeds
	// the rank's share of the GPU (CheckDeviceMemory).
	MemCheck bool `toml:"mem_check"`
	// Device is where each rank runs its local work: DeviceCPU (the
	// fastest host device of the build, device.Host: C kernels with cgo,
	// pure Go without), DeviceNative (pure Go) or DeviceCUDA (a GPU of the
	// node, local rank mod the node's GPUs).
	Device string `toml:"device"`
	// TF32 lets cuBLAS use TF32 tensor cores for GEMM. It applies to
	// DeviceCUDA only; set with a host device it is refused, since such a
	// job would not do what the file says.
	TF32 bool `toml:"tf32"`
	// GPUCache is the directory of NVRTC's compiled kernels for
	// DeviceCUDA; "" is the user cache directory. A relative path is
	// relative to the working directory, as output.dir is. Like TF32 it
	// is refused with a host device.
	GPUCache string `toml:"gpu_cache"`
}

// Devices of runtime.device: the names device.Open takes, except that
// DeviceCPU means device.Host, which is the C kernels in a build with cgo
// and the pure-Go ones without, so that the default job runs in every
// build.
const (
	DeviceCPU    = "cpu"
	DeviceNative = "native"
	DeviceCUDA   = "cuda"
)

// StallPolicy returns the watchdog policy of runtime.stall_timeout, and
// false for "off". The value has been validated.
func (r RuntimeConfig) StallPolicy() (watchdog.Policy, bool) {
	switch r.StallTimeout {
	case "off":
		return watchdog.Policy{}, false
	case "auto", "":
		return watchdog.DefaultPolicy(), true
	}
	d, err := time.ParseDuration(r.StallTimeout)
	if err != nil || d <= 0 {
		panic(fmt.Sprintf("jobs: runtime.stall_timeout = %q was not validated", r.StallTimeout))
	}
	return watchdog.FixedPolicy(d), true
}

// DefaultConfig returns the configuration of an empty job file: Kipf &
// Welling's two-layer GCN on Cora, on one rank.
func DefaultConfig() Config {
	return Config{
		Dataset: DatasetConfig{
			Source:            SourceCora,
			NormalizeFeatures: true,
			Seed:              1,
			SBM: dataset.SBMConfig{
				N:         10000,
				Classes:   8,
				Features:  64,
				AvgDegree: 10,
				Homophily: 0.8,
				NoiseStd:  1,
				TrainFrac: 0.1,
				ValFrac:   0.2,
				TestFrac:  0.3,
			},
			RMAT: dataset.RMATConfig{
				Scale:      16,
				EdgeFactor: 16,
				A:          0.57,
				B:          0.19,
				C:          0.19,
				Classes:    8,
				Features:   64,
				NoiseStd:   1, // not a job-file key
				TrainFrac:  0.1,
				ValFrac:    0.2,
				TestFrac:   0.3,
			},
		},
		Model: ModelConfig{
			Layers:  2,
			Hidden:  16,
			Dropout: 0.5,
			Norm:    gcn.NoNorm,
			Layer:   gcn.GCNLayer,
			Heads:   1,
			// OutputHeads 1: the paper's Cora and CiteSeer models average
			// one output head.
			OutputHeads: 1,
		},
		Optimizer: OptimizerConfig{
			Name:        OptimizerAdam,
			LR:          0.01,
			WeightDecay: 5e-4,
			Beta1:       0.9,
			Beta2:       0.999,
			Eps:         1e-8,
		},
		Train: TrainConfig{
			Mode:      gcn.FullGraph,
			Epochs:    200,
			EvalEvery: 1,
			Seed:      42,
			Prefetch:  true,
			CommDtype: collectives.Float32,
			Overlap:   true,
			EarlyStop: EarlyStopValAcc,
		},
		Grid:       GridConfig{X: 1, Y: 1, Z: 1, D: 1},
		Permute:    PermuteConfig{Scheme: permute.None, Seed: 7},
		Output:     OutputConfig{Dir: "runs/default", Metrics: "metrics.jsonl"},
		Runtime:    RuntimeConfig{StallTimeout: "auto", MemCheck: true, Device: DeviceCPU},
		Checkpoint: CheckpointConfig{Keep: 3},
	}
}

// LoadConfig reads, fills in and validates the job file at path.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading job file: %w", err)
	}
	return ParseConfig(path, data)
}

// ParseConfig reads the job file contents data, fills defaults for absent
// keys and validates the result. name is the file's path: it labels error
// messages and is the base of a relative dataset.path.
func ParseConfig(name string, data []byte) (*Config, error) {
	cfg := DefaultConfig()
	cfg.Path = name
	md, err := tomlx.Decode(name, data, &cfg, tomlx.Options{Aliases: aliases})
	if err != nil {
		return nil, err
	}
	if p := cfg.Dataset.Path; p != "" && !filepath.IsAbs(p) {
		cfg.Dataset.Path = filepath.Join(filepath.Dir(name), p)
	}
	// Row normalisation is Kipf & Welling's preprocessing of bag-of-words
	// features. The generators' features are Gaussian: a row's sum can be
	// near zero or negative, and dividing by it blows the row up (an SBM
	// run then stays near chance). So it is off for them, and for a
	// prepared dataset made from them, unless asked for. The value decided
	// here is the one written to the run's config.toml.
	if !md.IsDefined("dataset", "normalize_features") {
		src := cfg.Dataset.Source
		if src == SourcePrepared {
			// An unreadable meta.toml is reported when the dataset opens.
			if m, err := prepared.ReadMeta(cfg.Dataset.Path); err == nil {
				src = m.Source.Format
			}
		}
		if src == SourceSBM || src == SourceRMAT {
			cfg.Dataset.NormalizeFeatures = false
		}
	}
	if p := cfg.Grid.Machine; strings.ContainsAny(p, `/\`) || strings.HasSuffix(p, ".toml") {
		if !filepath.IsAbs(p) {
			cfg.Grid.Machine = filepath.Join(filepath.Dir(name), p)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// aliases maps names used by other GCN codes to ours.
var aliases = map[string]string{
	"learning_rate": "lr",
	"num_layers":    "layers",
	"n_layers":      "layers",
	"hidden_dim":    "hidden",
	"hidden_size":   "hidden",
	"hidden_units":  "hidden",
	"num_epochs":    "epochs",
	"optimizer":     "name",
	"dataset":       "source",
	"eval_interval": "eval_every",
	"num_threads":   "threads",
}

// Label names the configuration in messages: its file, or "job file".
func (c *Config) Label() string {
	if c.Path == "" {
		return "job file"
	}
	return c.Path
}

// Validate reports the first invalid value, naming the key, the value and
// what is expected. ParseConfig calls it; call it yourself on a Config built
// in code.
func (c *Config) Validate() error {
	ck := &tomlx.Checker{File: c.Label()}
	inf := math.Inf(1)

	d := c.Dataset
	ck.OneOf("dataset.source", d.Source, SourceCora, SourceCiteseer, SourcePlanetoid, SourceSBM, SourceRMAT, SourcePrepared)
	if d.Source == SourcePrepared && d.Path == "" && ck.Err == nil {
		ck.Err = fmt.Errorf(`%s: dataset.source = "prepared" needs dataset.path: set it to a directory written by scalegnn prepare (see docs/prepared.md)`, ck.File)
	}
	if d.Source == SourcePlanetoid && d.Path == "" && ck.Err == nil {
		ck.Err = fmt.Errorf(`%s: dataset.source = "planetoid" needs dataset.path: set it to a directory with features.txt, labels.txt, edges.txt and split_{train,val,test}.txt (plain or .gz; see docs/jobfile.md)`, ck.File)
	}
	switch {
	case ck.Err != nil:
	case d.Source == SourceSBM:
		ck.Err = generatorError(ck.File, d.SBMConfig().Validate())
	case d.Source == SourceRMAT:
		ck.Err = generatorError(ck.File, d.RMATConfig().Validate())
	}

	m := c.Model
	ck.AtLeast("model.layers", m.Layers, 1)
	ck.AtLeast("model.hidden", m.Hidden, 1)
	ck.Number("model.dropout", m.Dropout, "[)", 0, 1)
	ck.AtLeast("model.heads", m.Heads, 1)
	ck.AtLeast("model.output_heads", m.OutputHeads, 1)
	switch {
	case ck.Err != nil:
	case m.Layer != gcn.GATLayer && (m.Heads != 1 || m.OutputHeads != 1):
		ck.Err = fmt.Errorf(`%s: model.heads = %d, output_heads = %d: attention heads are for model.layer = "gat" (now %q): set layer = "gat", or remove heads and output_heads`, ck.File, m.Heads, m.OutputHeads, m.Layer)
	case m.Layer == gcn.GATLayer && (m.Norm != gcn.NoNorm || m.Residual):
		ck.Err = fmt.Errorf(`%s: model.layer = "gat" applies ELU between its layers and has no norm or residual: set model.norm = "none" and residual = false`, ck.File)
	}
	if m.Residual && !m.InputProjection && ck.Err == nil {
		ck.Err = fmt.Errorf("%s: model.residual = true needs model.input_projection = true so that every GCN layer maps hidden -> hidden: set it, or residual = false", ck.File)
	}

	o := c.Optimizer
	ck.OneOf("optimizer.name", o.Name, OptimizerAdam, OptimizerAdamW, OptimizerSGD)
	ck.Number("optimizer.lr", o.LR, "()", 0, inf)
	ck.Number("optimizer.weight_decay", o.WeightDecay, "[)", 0, inf)
	ck.Number("optimizer.beta1", o.Beta1, "[)", 0, 1)
	ck.Number("optimizer.beta2", o.Beta2, "[)", 0, 1)
	ck.Number("optimizer.eps", o.Eps, "()", 0, inf)

	t := c.Train
	ck.AtLeast("train.epochs", t.Epochs, 1)
	ck.AtLeast("train.eval_every", t.EvalEvery, 1)
	switch {
	case ck.Err != nil:
	case t.Mode == gcn.MiniBatch && t.BatchSize == 0 && t.BatchRatio == 0:
		ck.Err = fmt.Errorf(`%s: train.mode = "minibatch" needs a batch size of at least 1 vertex: set train.batch_size (vertices per batch) or train.batch_ratio (a fraction of the vertices, in (0, 1])`, ck.File)
	case t.Mode == gcn.MiniBatch && t.BatchSize != 0 && t.BatchRatio != 0:
		ck.Err = fmt.Errorf("%s: train.batch_size = %d and train.batch_ratio = %g: set only one of them", ck.File, t.BatchSize, t.BatchRatio)
	case t.Algorithm != "" && t.Algorithm != method.Plexus || c.Grid.Replication > 1:
		// Before the modes' own checks: 1.5D in a mode it cannot train
		// (neighbor, isolated) is refused, not ignored.
		ck.Err = checkAlgorithm(ck.File, c)
	default:
		ck.Err = methodChecks[c.Method()](ck.File, c)
	}
	if t.BatchSize != 0 {
		ck.AtLeast("train.batch_size", t.BatchSize, 1)
	}
	if t.BatchRatio != 0 {
		ck.Number("train.batch_ratio", t.BatchRatio, "(]", 0, 1)
	}
	ck.AtLeast("train.steps_per_epoch", t.StepsPerEpoch, 0)
	if t.TargetAcc != 0 {
		ck.Number("train.target_acc", t.TargetAcc, "(]", 0, 1)
	}
	ck.AtLeast("train.patience", t.Patience, 0)
	ck.OneOf("train.early_stop", t.EarlyStop, EarlyStopValAcc, EarlyStopValLossAcc)

	g := c.Grid
	ck.AtLeast("grid.x", g.X, 1)
	ck.AtLeast("grid.y", g.Y, 1)
	ck.AtLeast("grid.z", g.Z, 1)
	ck.AtLeast("grid.d", g.D, 1)
	if g.Auto && (g.X != 1 || g.Y != 1 || g.Z != 1 || g.D != 1) && ck.Err == nil {
		ck.Err = fmt.Errorf("%s: grid.auto = true chooses grid.x, y, z and d: remove them, or set auto = false", ck.File)
	}
	ck.AtLeast("grid.ranks_per_node", g.RanksPerNode, 0)
	if g.MemPerRank != "" && ck.Err == nil {
		if _, err := perfmodel.ParseBytes(g.MemPerRank); err != nil {
			ck.Err = fmt.Errorf("%s: grid.mem_per_rank = %s", ck.File, err)
		}
	}
	if t.Mode == gcn.FullGraph && g.D != 1 && ck.Err == nil {
		ck.Err = fmt.Errorf(`%s: grid.d = %d: expected 1 in full-graph training (data-parallel replicas train on different mini-batches: set train.mode = "minibatch")`, ck.File, g.D)
	}
	if t.CommDtype == collectives.BF16 && g.X*g.Y*g.Z == 1 && ck.Err == nil {
		ck.Err = fmt.Errorf(`%s: train.comm_dtype = "bf16" compresses the all-reduces inside a 3D grid, and a 1x1x1 grid has none: use comm_dtype = "float32" or a grid with x*y*z > 1`, ck.File)
	}

	if c.Output.Dir == "" {
		ck.Fail("output.dir", "", "a non-empty directory path")
	}
	if c.Output.Metrics == "" {
		ck.Fail("output.metrics", "", "a non-empty file name")
	}
	c.Checkpoint.validate(ck)
	ck.AtLeast("runtime.threads", c.Runtime.Threads, 0)
	if st := c.Runtime.StallTimeout; st != "auto" && st != "off" && ck.Err == nil {
		if d, err := time.ParseDuration(st); err != nil || d <= 0 {
			ck.Err = fmt.Errorf(`%s: runtime.stall_timeout = %q: expected a positive duration such as "20s" or "5m", "auto" or "off"`, ck.File, st)
		}
	}
	r := c.Runtime
	ck.OneOf("runtime.device", r.Device, DeviceCPU, DeviceNative, DeviceCUDA)
	if r.Device != DeviceCUDA {
		// A GPU setting on the host is a job that would not do what it
		// says (a file copied from a GPU machine), not a harmless extra.
		if r.TF32 {
			ck.Failf(`runtime.tf32 = true applies to runtime.device = "cuda", and runtime.device = %q: set device = "cuda" or remove tf32`, r.Device)
		}
		if r.GPUCache != "" {
			ck.Failf(`runtime.gpu_cache = %q applies to runtime.device = "cuda", and runtime.device = %q: set device = "cuda" or remove gpu_cache`, r.GPUCache, r.Device)
		}
	}
	return ck.Err
}

// generatorError places an error of a generator's config (which names
// keys of its own table) in the job file: "file: dataset.sbm.nodes = ...".
func generatorError(file string, err error) error {
	var ce *dataset.ConfigError
	if errors.As(err, &ce) {
		return fmt.Errorf("%s: dataset.%s.%v", file, ce.Table, ce.Err)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	return nil
}

// CheckWorld reports whether the grid has exactly worldSize ranks, the number
// the job was started with.
func (c *Config) CheckWorld(worldSize int) error {
	g := c.Grid
	if g.Auto {
		return nil // the grid is chosen for worldSize
	}
	if g.D > 0 && worldSize%g.D != 0 {
		return fmt.Errorf("%s: grid.d = %d data-parallel replicas do not divide the %d ranks the job was started with: choose grid.d among %v",
			c.Label(), g.D, worldSize, divisors(worldSize))
	}
	if n := g.Ranks(); n != worldSize {
		return fmt.Errorf("%s: grid %dx%dx%d (d=%d) has %d ranks but the job was started with %d: set grid.x*grid.y*grid.z*grid.d = %d",
			c.Label(), g.X, g.Y, g.Z, g.D, n, worldSize, worldSize)
	}
	return nil
}

// divisors returns the divisors of n in increasing order.
func divisors(n int) []int {
	var d []int
	for i := 1; i <= n; i++ {
		if n%i == 0 {
			d = append(d, i)
		}
	}
	return d
}

// MetricsPath returns the metrics file: Output.Metrics inside Output.Dir,
// unless Output.Metrics is absolute.
func (c *Config) MetricsPath() string {
	if filepath.IsAbs(c.Output.Metrics) {
		return c.Output.Metrics
	}
	return filepath.Join(c.Output.Dir, c.Output.Metrics)
}

// WriteTOML writes the effective configuration as a job file, so a run can
// store next to its results exactly what it did.
func (c *Config) WriteTOML(w io.Writer) error {
	var buf bytes.Buffer
	if c.Path != "" {
		fmt.Fprintf(&buf, "# effective configuration of %s\n", c.Path)
	}
	if err := toml.NewEncoder(&buf).Encode(c); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Summary returns the effective configuration as log fields, one object per
// table. The sbm and rmat tables appear only when dataset.source selects
// them.
func (c *Config) Summary() []zap.Field {
	fields := []zap.Field{zap.String("job", c.Label())}
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := t.Field(i).Tag.Get("toml")
		if name == "" || name == "-" {
			continue
		}
		fields = append(fields, zap.Object(name, tableLog{v: v.Field(i), source: c.Dataset.Source}))
	}
	return fields
}

// tableLog logs one table of a Config.
type tableLog struct {
	v      reflect.Value
	source string
}

func (tl tableLog) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	t := tl.v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := t.Field(i).Tag.Get("toml")
		if name == "" || name == "-" {
			continue
		}
		f := tl.v.Field(i)
		// Typed options (gcn.Mode, permute.Scheme, ...) log their names.
		if tm, ok := f.Interface().(encoding.TextMarshaler); ok {
			b, err := tm.MarshalText()
			if err != nil {
				return err
			}
			enc.AddString(name, string(b))
			continue
		}
		switch f.Kind() {
		case reflect.String:
			enc.AddString(name, f.String())
		case reflect.Bool:
			enc.AddBool(name, f.Bool())
		case reflect.Int, reflect.Int64:
			enc.AddInt64(name, f.Int())
		case reflect.Float64:
			enc.AddFloat64(name, f.Float())
		case reflect.Struct:
			if name == tl.source {
				if err := enc.AddObject(name, tableLog{v: f, source: tl.source}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
