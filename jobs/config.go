package jobs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"scalegnn/perfmodel"
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

// Normalisations applied after each GCN layer.
const (
	NormNone = "none"
	NormRMS  = "rms"
)

// Optimizers.
const (
	OptimizerAdam  = "adam"
	OptimizerAdamW = "adamw"
	OptimizerSGD   = "sgd"
)

// Training modes.
const (
	ModeFullGraph = "fullgraph"
	ModeMiniBatch = "minibatch"
)

// Vertex permutation schemes.
const (
	PermuteNone   = "none"
	PermuteSingle = "single"
	PermuteDouble = "double"
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
	NormalizeFeatures bool `toml:"normalize_features"`
	// Seed seeds the sbm and rmat generators.
	Seed int64      `toml:"seed"`
	SBM  SBMConfig  `toml:"sbm"`
	RMAT RMATConfig `toml:"rmat"`
}

// SBMConfig describes a stochastic block model graph with class-dependent
// Gaussian features.
type SBMConfig struct {
	Nodes     int     `toml:"nodes"`
	Classes   int     `toml:"classes"`
	Features  int     `toml:"features"`
	AvgDegree float64 `toml:"avg_degree"`
	// Homophily is the fraction of a vertex's edges that stay in its class.
	Homophily float64 `toml:"homophily"`
	// FeatureNoise is the standard deviation of the noise around each
	// class's feature mean.
	FeatureNoise  float64 `toml:"feature_noise"`
	TrainFraction float64 `toml:"train_fraction"`
	ValFraction   float64 `toml:"val_fraction"`
	TestFraction  float64 `toml:"test_fraction"`
}

// RMATConfig describes an R-MAT graph with 2^Scale vertices and
// EdgeFactor·2^Scale generated edges; D = 1 - A - B - C.
type RMATConfig struct {
	Scale         int     `toml:"scale"`
	EdgeFactor    int     `toml:"edge_factor"`
	A             float64 `toml:"a"`
	B             float64 `toml:"b"`
	C             float64 `toml:"c"`
	Classes       int     `toml:"classes"`
	Features      int     `toml:"features"`
	TrainFraction float64 `toml:"train_fraction"`
	ValFraction   float64 `toml:"val_fraction"`
	TestFraction  float64 `toml:"test_fraction"`
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
	// Norm is NormNone or NormRMS.
	Norm string `toml:"norm"`
	// Residual adds each GCN layer's input to its output; it needs
	// InputProjection so that the layers are hidden → hidden.
	Residual bool `toml:"residual"`
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

// Communication data types of the 3D-PMM all-reduces.
const (
	CommFloat32 = "float32"
	CommBF16    = "bf16"
)

// TrainConfig describes the training loop.
type TrainConfig struct {
	// Mode is ModeFullGraph (one step per epoch on the whole graph) or
	// ModeMiniBatch (uniform vertex sampling, ScaleGNN).
	Mode   string `toml:"mode"`
	Epochs int    `toml:"epochs"`
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
	// CommDtype is CommFloat32 or CommBF16 (the 3D-PMM partial sums travel
	// as bfloat16; norm, loss and data-parallel reductions stay float32).
	CommDtype string `toml:"comm_dtype"`
	// Overlap issues the backward all-reduces on orthogonal groups
	// nonblocking, overlapping them with the local GEMM and SpMM.
	Overlap bool `toml:"overlap"`
	// EvalEvery evaluates validation and test accuracy every EvalEvery
	// epochs and at the last epoch.
	EvalEvery int `toml:"eval_every"`
	// Seed seeds parameter initialisation and dropout.
	Seed int64 `toml:"seed"`
}

// GridConfig is the process grid: D data-parallel replicas of an X×Y×Z grid.
type GridConfig struct {
	X int `toml:"x"`
	Y int `toml:"y"`
	Z int `toml:"z"`
	D int `toml:"d"`
	// Auto chooses X, Y, Z (and D in mini-batch training) at start-up with
	// the performance model: the fastest predicted grid of the launch's
	// ranks that fits in MemPerRank. Machine, MemPerRank and RanksPerNode
	// are used only with Auto.
	Auto bool `toml:"auto"`
	// Machine is a profile written by scalegnn perfmodel calibrate, or the
	// name of a built-in profile; empty: the built-in defaults.
	Machine string `toml:"machine"`
	// MemPerRank limits the memory per rank, e.g. "40GiB"; empty: no limit.
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
	// Scheme is PermuteNone, PermuteSingle or PermuteDouble.
	Scheme string `toml:"scheme"`
	Seed   int64  `toml:"seed"`
}

// OutputConfig says where results go.
type OutputConfig struct {
	// Dir is created if missing; a relative Dir is relative to the current
	// working directory.
	Dir string `toml:"dir"`
	// Metrics is the metrics file name, relative to Dir.
	Metrics string `toml:"metrics"`
}

// RuntimeConfig tunes the local kernels.
type RuntimeConfig struct {
	// Threads is the number of kernel goroutines per rank; 0 leaves the
	// choice to the caller (GOMAXPROCS divided by the ranks on the node).
	Threads int `toml:"threads"`
}

// DefaultConfig returns the configuration of an empty job file: Kipf &
// Welling's two-layer GCN on Cora, on one rank.
func DefaultConfig() Config {
	return Config{
		Dataset: DatasetConfig{
			Source:            SourceCora,
			NormalizeFeatures: true,
			Seed:              1,
			SBM: SBMConfig{
				Nodes:         10000,
				Classes:       8,
				Features:      64,
				AvgDegree:     10,
				Homophily:     0.8,
				FeatureNoise:  1,
				TrainFraction: 0.1,
				ValFraction:   0.2,
				TestFraction:  0.3,
			},
			RMAT: RMATConfig{
				Scale:         16,
				EdgeFactor:    16,
				A:             0.57,
				B:             0.19,
				C:             0.19,
				Classes:       8,
				Features:      64,
				TrainFraction: 0.1,
				ValFraction:   0.2,
				TestFraction:  0.3,
			},
		},
		Model: ModelConfig{
			Layers:  2,
			Hidden:  16,
			Dropout: 0.5,
			Norm:    NormNone,
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
			Mode:      ModeFullGraph,
			Epochs:    200,
			EvalEvery: 1,
			Seed:      42,
			Prefetch:  true,
			CommDtype: CommFloat32,
			Overlap:   true,
		},
		Grid:    GridConfig{X: 1, Y: 1, Z: 1, D: 1},
		Permute: PermuteConfig{Scheme: PermuteNone, Seed: 7},
		Output:  OutputConfig{Dir: "runs/default", Metrics: "metrics.jsonl"},
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
	md, err := toml.Decode(string(data), &cfg)
	if err != nil && len(md.Keys()) == 0 {
		// The file did not parse at all: report the parser's position.
		return nil, positioned(name, err)
	}
	// A type mismatch stops the decoder; report it in our words before
	// anything else, since later checks see a half-decoded config.
	if terr := checkTypes(name, data, &md); terr != nil {
		return nil, terr
	}
	if err != nil {
		return nil, positioned(name, err)
	}
	if uerr := checkUnknown(name, &md); uerr != nil {
		return nil, uerr
	}
	if p := cfg.Dataset.Path; p != "" && !filepath.IsAbs(p) {
		cfg.Dataset.Path = filepath.Join(filepath.Dir(name), p)
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

// positioned formats a toml error as "name: line L, column C: message".
func positioned(name string, err error) error {
	var perr toml.ParseError
	if errors.As(err, &perr) {
		msg := perr.Message
		if perr.LastKey != "" {
			msg = perr.LastKey + ": " + msg
		}
		return fmt.Errorf("%s: line %d, column %d: %s", name, perr.Position.Line, perr.Position.Col, msg)
	}
	return fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "toml: "))
}

// schema maps each dotted key of a job file to its Go type, and each table
// ("" for the top level) to its keys in declaration order.
type schema struct {
	types  map[string]reflect.Type
	tables map[string][]string
	order  []string // tables in declaration order, for deterministic suggestions
}

var jobSchema = buildSchema(reflect.TypeOf(Config{}))

func buildSchema(t reflect.Type) schema {
	s := schema{types: make(map[string]reflect.Type), tables: make(map[string][]string)}
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := f.Tag.Get("toml")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			key := name
			if prefix != "" {
				key = prefix + "." + name
			}
			s.types[key] = f.Type
			s.tables[prefix] = append(s.tables[prefix], name)
			if f.Type.Kind() == reflect.Struct {
				s.order = append(s.order, key)
				walk(key, f.Type)
			}
		}
	}
	s.order = append(s.order, "")
	walk("", t)
	return s
}

// checkTypes reports the first key, in file order, whose TOML type cannot be
// decoded into its field.
func checkTypes(name string, data []byte, md *toml.MetaData) error {
	for _, k := range md.Keys() {
		t, ok := jobSchema.types[k.String()]
		if !ok {
			continue
		}
		got := md.Type(k...)
		if typeFits(t, got) {
			continue
		}
		// Decoding into a map cannot fail on types, so it gives the value.
		var raw map[string]any
		toml.Decode(string(data), &raw)
		v := lookup(raw, k)
		if _, isTable := v.(map[string]any); isTable {
			return fmt.Errorf("%s: %s is a table: expected %s", name, k, expectedType(t))
		}
		val := tomlValue(v)
		if got == "Float" && !strings.ContainsAny(val, ".eIN") {
			val += ".0" // show 16.0 as written, not as 16
		}
		return fmt.Errorf("%s: %s = %s: expected %s, not %s", name, k, val, expectedType(t), tomlTypeName(got))
	}
	return nil
}

func typeFits(t reflect.Type, tomlType string) bool {
	switch t.Kind() {
	case reflect.Struct:
		return tomlType == "Hash"
	case reflect.String:
		return tomlType == "String"
	case reflect.Bool:
		return tomlType == "Bool"
	case reflect.Int, reflect.Int64:
		return tomlType == "Integer"
	case reflect.Float64:
		return tomlType == "Integer" || tomlType == "Float"
	}
	return false
}

func expectedType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct:
		return "a table"
	case reflect.String:
		return "a string in double quotes"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	}
	return t.String()
}

func tomlTypeName(t string) string {
	switch t {
	case "String":
		return "a string"
	case "Integer":
		return "an integer"
	case "Float":
		return "a float"
	case "Bool":
		return "a boolean"
	case "Array":
		return "an array"
	case "ArrayHash":
		return "an array of tables"
	case "Hash":
		return "a table"
	}
	return "a date/time"
}

func lookup(raw map[string]any, k toml.Key) any {
	var v any = raw
	for _, p := range k {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// checkUnknown reports the first key, in file order, that is not in the
// schema. The decoder matches field names case-insensitively, so a key like
// model.Hidden counts as decoded; comparing with the schema catches it too.
func checkUnknown(name string, md *toml.MetaData) error {
	undecoded := make(map[string]bool)
	for _, k := range md.Undecoded() {
		undecoded[k.String()] = true
	}
	for _, k := range md.Keys() {
		if _, known := jobSchema.types[k.String()]; known && !undecoded[k.String()] {
			continue
		}
		// Report the outermost unknown part: for modle.layers = 2 that is
		// the table modle.
		for i := range k {
			if _, known := jobSchema.types[k[:i+1].String()]; !known {
				k = k[:i+1]
				break
			}
		}
		table, leaf := strings.Join(k[:len(k)-1], "."), k[len(k)-1]
		if md.Type(k...) == "Hash" {
			return fmt.Errorf("%s: unknown table [%s]: %s", name, k, suggest(table, leaf, true))
		}
		return fmt.Errorf("%s: unknown key %s: %s", name, k, suggest(table, leaf, false))
	}
	return nil
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

// suggest returns "did you mean ...?" for an unknown key leaf in table, a
// known table, or the table's valid keys when nothing is close.
func suggest(table, leaf string, isTable bool) string {
	mean := func(t, k string) string {
		if t != "" {
			k = t + "." + k
		}
		if isTable {
			return "did you mean [" + k + "]?"
		}
		return "did you mean " + k + "?"
	}
	keys := jobSchema.tables[table]
	want := strings.ToLower(leaf)
	if a, ok := aliases[want]; ok {
		want = a
	}
	best, bestDist := "", math.MaxInt
	for _, k := range keys {
		if d := editDistance(want, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if bestDist <= max(1, len(want)/3) {
		return mean(table, best)
	}
	// The key may belong to another table, e.g. lr under [model].
	for _, t := range jobSchema.order {
		for _, k := range jobSchema.tables[t] {
			if k == want && t != table {
				return mean(t, k)
			}
		}
	}
	if table == "" {
		return "valid tables are " + strings.Join(keys, ", ")
	}
	return fmt.Sprintf("valid keys in [%s] are %s", table, strings.Join(keys, ", "))
}

// editDistance is the optimal string alignment distance between a and b:
// Levenshtein with adjacent transpositions costing 1, the commonest typo.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// tomlValue formats v as it would be written in a job file.
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = tomlValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []map[string]any:
		return "[[...]]"
	case map[string]any:
		return "{...}"
	}
	return fmt.Sprint(v)
}

// checker records the first invalid value found by Validate.
type checker struct {
	file string
	err  error
}

func (ck *checker) fail(key string, value any, expected string) {
	if ck.err == nil {
		ck.err = fmt.Errorf("%s: %s = %s: expected %s", ck.file, key, tomlValue(value), expected)
	}
}

func (ck *checker) atLeast(key string, v, lo int) {
	if v < lo {
		ck.fail(key, int64(v), fmt.Sprintf("an integer >= %d", lo))
	}
}

func (ck *checker) intIn(key string, v, lo, hi int) {
	if v < lo || v > hi {
		ck.fail(key, int64(v), fmt.Sprintf("an integer in [%d, %d]", lo, hi))
	}
}

// number checks lo <= v < hi or lo < v <= hi and so on, as the bracket
// characters of the interval say; hi may be +Inf for no upper bound. NaN and
// ±Inf never pass, since TOML can spell them.
func (ck *checker) number(key string, v float64, interval string, lo, hi float64) {
	ok := !math.IsNaN(v) && !math.IsInf(v, 0)
	switch interval {
	case "[]":
		ok = ok && v >= lo && v <= hi
	case "[)":
		ok = ok && v >= lo && v < hi
	case "(]":
		ok = ok && v > lo && v <= hi
	case "()":
		ok = ok && v > lo && v < hi
	}
	if ok {
		return
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	var want string
	switch {
	case math.IsInf(hi, 1) && interval[0] == '[':
		want = "a number >= " + g(lo)
	case math.IsInf(hi, 1):
		want = "a number > " + g(lo)
	default:
		want = fmt.Sprintf("a number in %c%s, %s%c", interval[0], g(lo), g(hi), interval[1])
	}
	ck.fail(key, v, want)
}

func (ck *checker) oneOf(key, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	q := make([]string, len(allowed))
	for i, a := range allowed {
		q[i] = strconv.Quote(a)
	}
	ck.fail(key, v, "one of "+strings.Join(q, ", "))
}

func (ck *checker) fractions(table string, train, val, test float64) {
	ck.number(table+".train_fraction", train, "(]", 0, 1)
	ck.number(table+".val_fraction", val, "[]", 0, 1)
	ck.number(table+".test_fraction", test, "[]", 0, 1)
	if s := train + val + test; ck.err == nil && s > 1+1e-9 {
		ck.err = fmt.Errorf("%s: %s.train_fraction + val_fraction + test_fraction = %.4g: expected at most 1; lower one of them",
			ck.file, table, s)
	}
}

// label names the configuration in messages.
func (c *Config) label() string {
	if c.Path == "" {
		return "job file"
	}
	return c.Path
}

// Validate reports the first invalid value, naming the key, the value and
// what is expected. ParseConfig calls it; call it yourself on a Config built
// in code.
func (c *Config) Validate() error {
	ck := &checker{file: c.label()}
	inf := math.Inf(1)

	d := c.Dataset
	ck.oneOf("dataset.source", d.Source, SourceCora, SourceCiteseer, SourcePlanetoid, SourceSBM, SourceRMAT, SourcePrepared)
	if d.Source == SourcePrepared && d.Path == "" && ck.err == nil {
		ck.err = fmt.Errorf(`%s: dataset.source = "prepared" needs dataset.path: set it to a directory written by scalegnn prepare (see docs/prepared.md)`, ck.file)
	}
	if d.Source == SourcePlanetoid && d.Path == "" && ck.err == nil {
		ck.err = fmt.Errorf(`%s: dataset.source = "planetoid" needs dataset.path: set it to a directory with features.txt, labels.txt, edges.txt and split_{train,val,test}.txt (plain or .gz; see docs/jobfile.md)`, ck.file)
	}
	switch d.Source {
	case SourceSBM:
		s := d.SBM
		ck.atLeast("dataset.sbm.classes", s.Classes, 2)
		if s.Nodes < max(s.Classes, 2) {
			ck.fail("dataset.sbm.nodes", int64(s.Nodes), fmt.Sprintf("an integer >= dataset.sbm.classes = %d", s.Classes))
		}
		ck.atLeast("dataset.sbm.features", s.Features, 1)
		ck.number("dataset.sbm.avg_degree", s.AvgDegree, "[)", 0, float64(s.Nodes))
		ck.number("dataset.sbm.homophily", s.Homophily, "[]", 0, 1)
		ck.number("dataset.sbm.feature_noise", s.FeatureNoise, "[)", 0, inf)
		ck.fractions("dataset.sbm", s.TrainFraction, s.ValFraction, s.TestFraction)
	case SourceRMAT:
		r := d.RMAT
		ck.intIn("dataset.rmat.scale", r.Scale, 1, 30)
		ck.atLeast("dataset.rmat.edge_factor", r.EdgeFactor, 1)
		ck.number("dataset.rmat.a", r.A, "[]", 0, 1)
		ck.number("dataset.rmat.b", r.B, "[]", 0, 1)
		ck.number("dataset.rmat.c", r.C, "[]", 0, 1)
		if s := r.A + r.B + r.C; ck.err == nil && s > 1+1e-9 {
			ck.err = fmt.Errorf("%s: dataset.rmat.a + b + c = %.4g: expected at most 1 (d = 1 - a - b - c)", ck.file, s)
		}
		ck.atLeast("dataset.rmat.classes", r.Classes, 2)
		ck.atLeast("dataset.rmat.features", r.Features, 1)
		ck.fractions("dataset.rmat", r.TrainFraction, r.ValFraction, r.TestFraction)
	}

	m := c.Model
	ck.atLeast("model.layers", m.Layers, 1)
	ck.atLeast("model.hidden", m.Hidden, 1)
	ck.number("model.dropout", m.Dropout, "[)", 0, 1)
	ck.oneOf("model.norm", m.Norm, NormNone, NormRMS)
	if m.Residual && !m.InputProjection && ck.err == nil {
		ck.err = fmt.Errorf("%s: model.residual = true needs model.input_projection = true so that every GCN layer maps hidden -> hidden: set it, or residual = false", ck.file)
	}

	o := c.Optimizer
	ck.oneOf("optimizer.name", o.Name, OptimizerAdam, OptimizerAdamW, OptimizerSGD)
	ck.number("optimizer.lr", o.LR, "()", 0, inf)
	ck.number("optimizer.weight_decay", o.WeightDecay, "[)", 0, inf)
	ck.number("optimizer.beta1", o.Beta1, "[)", 0, 1)
	ck.number("optimizer.beta2", o.Beta2, "[)", 0, 1)
	ck.number("optimizer.eps", o.Eps, "()", 0, inf)

	t := c.Train
	ck.oneOf("train.mode", t.Mode, ModeFullGraph, ModeMiniBatch)
	ck.atLeast("train.epochs", t.Epochs, 1)
	ck.atLeast("train.eval_every", t.EvalEvery, 1)
	switch {
	case ck.err != nil:
	case t.Mode == ModeMiniBatch && t.BatchSize == 0 && t.BatchRatio == 0:
		ck.err = fmt.Errorf(`%s: train.mode = "minibatch" needs a batch size of at least 1 vertex: set train.batch_size (vertices per batch) or train.batch_ratio (a fraction of the vertices, in (0, 1])`, ck.file)
	case t.Mode == ModeMiniBatch && t.BatchSize != 0 && t.BatchRatio != 0:
		ck.err = fmt.Errorf("%s: train.batch_size = %d and train.batch_ratio = %g: set only one of them", ck.file, t.BatchSize, t.BatchRatio)
	case t.Mode == ModeFullGraph && (t.BatchSize != 0 || t.BatchRatio != 0 || t.StepsPerEpoch != 0):
		ck.err = fmt.Errorf(`%s: train.batch_size, batch_ratio and steps_per_epoch apply to mini-batch training: set train.mode = "minibatch" or remove them`, ck.file)
	}
	if t.BatchSize != 0 {
		ck.atLeast("train.batch_size", t.BatchSize, 1)
	}
	if t.BatchRatio != 0 {
		ck.number("train.batch_ratio", t.BatchRatio, "(]", 0, 1)
	}
	ck.atLeast("train.steps_per_epoch", t.StepsPerEpoch, 0)
	ck.oneOf("train.comm_dtype", t.CommDtype, CommFloat32, CommBF16)

	g := c.Grid
	ck.atLeast("grid.x", g.X, 1)
	ck.atLeast("grid.y", g.Y, 1)
	ck.atLeast("grid.z", g.Z, 1)
	ck.atLeast("grid.d", g.D, 1)
	if g.Auto && (g.X != 1 || g.Y != 1 || g.Z != 1 || g.D != 1) && ck.err == nil {
		ck.err = fmt.Errorf("%s: grid.auto = true chooses grid.x, y, z and d: remove them, or set auto = false", ck.file)
	}
	ck.atLeast("grid.ranks_per_node", g.RanksPerNode, 0)
	if g.MemPerRank != "" && ck.err == nil {
		if _, err := perfmodel.ParseBytes(g.MemPerRank); err != nil {
			ck.err = fmt.Errorf("%s: grid.mem_per_rank = %s", ck.file, err)
		}
	}
	if t.Mode == ModeFullGraph && g.D != 1 && ck.err == nil {
		ck.err = fmt.Errorf(`%s: grid.d = %d: expected 1 in full-graph training (data-parallel replicas train on different mini-batches: set train.mode = "minibatch")`, ck.file, g.D)
	}
	if t.CommDtype == CommBF16 && g.X*g.Y*g.Z == 1 && ck.err == nil {
		ck.err = fmt.Errorf(`%s: train.comm_dtype = "bf16" compresses the all-reduces inside a 3D grid, and a 1x1x1 grid has none: use comm_dtype = "float32" or a grid with x*y*z > 1`, ck.file)
	}

	ck.oneOf("permute.scheme", c.Permute.Scheme, PermuteNone, PermuteSingle, PermuteDouble)

	if c.Output.Dir == "" {
		ck.fail("output.dir", "", "a non-empty directory path")
	}
	if c.Output.Metrics == "" {
		ck.fail("output.metrics", "", "a non-empty file name")
	}
	ck.atLeast("runtime.threads", c.Runtime.Threads, 0)
	return ck.err
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
			c.label(), g.D, worldSize, divisors(worldSize))
	}
	if n := g.Ranks(); n != worldSize {
		return fmt.Errorf("%s: grid %dx%dx%d (d=%d) has %d ranks but the job was started with %d: set grid.x*grid.y*grid.z*grid.d = %d",
			c.label(), g.X, g.Y, g.Z, g.D, n, worldSize, worldSize)
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
	fields := []zap.Field{zap.String("job", c.label())}
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
		f := tl.v.Field(i)
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
