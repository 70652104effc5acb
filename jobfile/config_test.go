package jobfile

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"scalegnn/dataset"
	"scalegnn/permute"
	"scalegnn/prepared"
)

func TestParseConfigEmptyGivesDefaults(t *testing.T) {
	for _, data := range []string{"", "# only a comment\n", "[model]\n"} {
		c, err := ParseConfig("job.toml", []byte(data))
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		want := DefaultConfig()
		want.Path = "job.toml"
		if !reflect.DeepEqual(*c, want) {
			t.Errorf("%q: got %+v, want defaults %+v", data, *c, want)
		}
	}
	d := DefaultConfig()
	if d.Dataset.Source != "cora" || d.Model.Layers != 2 || d.Model.Hidden != 16 || d.Model.Dropout != 0.5 ||
		d.Optimizer.LR != 0.01 || d.Optimizer.WeightDecay != 5e-4 || d.Train.Epochs != 200 ||
		d.Grid != (GridConfig{X: 1, Y: 1, Z: 1, D: 1}) || d.Output.Dir != "runs/default" || !d.Dataset.NormalizeFeatures {
		t.Errorf("unexpected defaults: %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestParseConfigKeepsDefaultsOfAbsentKeys(t *testing.T) {
	c, err := ParseConfig("job.toml", []byte("[model]\nhidden = 64\n[optimizer]\nlr = 1\n[dataset.sbm]\nnodes = 50\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := DefaultConfig()
	if c.Model.Hidden != 64 || c.Model.Layers != d.Model.Layers || c.Optimizer.LR != 1 ||
		c.Optimizer.Beta1 != d.Optimizer.Beta1 || c.Dataset.SBM.N != 50 || c.Dataset.SBM.Classes != d.Dataset.SBM.Classes {
		t.Errorf("got %+v", c)
	}
}

func TestExamplesValidate(t *testing.T) {
	paths, err := filepath.Glob("../examples/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 5 {
		t.Fatalf("found %d example job files in ../examples, want at least 5", len(paths))
	}
	for _, p := range paths {
		c, err := LoadConfig(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if c.Path != p {
			t.Errorf("%s: Path = %q", p, c.Path)
		}
		if err := c.CheckWorld(c.Grid.Ranks()); err != nil {
			t.Errorf("%v", err)
		}
	}
}

func TestExampleSettings(t *testing.T) {
	c, err := LoadConfig("../examples/cora.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Train.EvalEvery != 10 || c.Grid.Ranks() != 1 || c.Model.Hidden != 16 {
		t.Errorf("cora.toml: got %+v", c)
	}
	c, err = LoadConfig("../examples/cora-8.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Grid != (GridConfig{X: 2, Y: 2, Z: 2, D: 1}) || c.Permute.Scheme != permute.Double {
		t.Errorf("cora-8.toml: got grid %+v permute %+v", c.Grid, c.Permute)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, test := range []struct {
		name string
		data string
		want []string // substrings of the error
	}{
		{"malformed", "[model]\nlayers = 2\nhidden = = 3\n", []string{"job.toml: line 3, column"}},
		{"unclosed table", "[model\n", []string{"job.toml: line ", "to end table name"}},
		{"duplicate key", "[model]\nlayers = 2\nlayers = 3\n", []string{"job.toml: line 3", "model.layers"}},
		{"unknown key", "[model]\nhiden = 32\n", []string{"job.toml", "unknown key model.hiden", "did you mean model.hidden?"}},
		{"unknown key transposed", "[model]\ndropuot = 0.1\n", []string{"model.dropuot", "did you mean model.dropout?"}},
		{"unknown key case", "[model]\nHidden = 32\n", []string{"model.Hidden", "did you mean model.hidden?"}},
		{"key in wrong table", "[model]\nlr = 0.1\n", []string{"model.lr", "did you mean optimizer.lr?"}},
		{"alias", "[optimizer]\nlearning_rate = 0.1\n", []string{"optimizer.learning_rate", "did you mean optimizer.lr?"}},
		{"unknown key no suggestion", "[grid]\nwibble = 1\n", []string{"grid.wibble", "valid keys in [grid] are x, y, z, d"}},
		{"unknown table", "[modle]\nlayers = 2\n", []string{"unknown table [modle]", "did you mean [model]?"}},
		{"unknown dotted table", "modle.layers = 2\n", []string{"unknown key modle", "did you mean model?"}},
		{"unknown key in unselected sub-table", "[dataset.sbm]\nnodez = 5\n", []string{"dataset.sbm.nodez", "did you mean dataset.sbm.nodes?"}},
		{"unknown sub-table", "[dataset.sbn]\nnodes = 5\n", []string{"unknown table [dataset.sbn]", "did you mean [dataset.sbm]?"}},
		{"string for number", "[model]\ndropout = \"0.5\"\n", []string{`job.toml: model.dropout = "0.5": expected a number, not a string`}},
		{"float for integer", "[model]\nhidden = 16.0\n", []string{"model.hidden = 16.0: expected an integer, not a float"}},
		{"number for string", "[dataset]\nsource = 3\n", []string{"dataset.source = 3: expected a string"}},
		{"string for bool", "[model]\nresidual = \"yes\"\n", []string{`model.residual = "yes": expected true or false`}},
		{"value for table", "model = 3\n", []string{"model = 3: expected a table"}},
		{"table for value", "[model.layers]\nx = 1\n", []string{"model.layers is a table: expected an integer"}},
		{"integer overflow", "[model]\nlayers = 99999999999999999999\n", []string{"job.toml: line 2"}},
		{"dropout", "[model]\ndropout = 1.5\n", []string{"job.toml: model.dropout = 1.5: expected a number in [0, 1)"}},
		{"dropout negative", "[model]\ndropout = -0.1\n", []string{"model.dropout = -0.1: expected a number in [0, 1)"}},
		{"dropout nan", "[model]\ndropout = nan\n", []string{"model.dropout = NaN: expected a number in [0, 1)"}},
		{"layers", "[model]\nlayers = 0\n", []string{"model.layers = 0: expected an integer >= 1"}},
		{"hidden", "[model]\nhidden = 0\n", []string{"model.hidden = 0: expected an integer >= 1"}},
		{"norm", "[model]\nnorm = \"layer\"\n", []string{`model.norm = "layer": expected one of "none", "rms"`}},
		{"layer", "[model]\nlayer = \"graphsage\"\n", []string{`model.layer = "graphsage": expected one of "gcn", "sage"`}},
		{"residual", "[model]\nresidual = true\n", []string{"model.residual = true needs model.input_projection = true"}},
		{"lr", "[optimizer]\nlr = -1\n", []string{"optimizer.lr = -1: expected a number > 0"}},
		{"early_stop", "[train]\nearly_stop = \"loss\"\n", []string{`job.toml: train.early_stop = "loss": expected one of "val_acc", "val_loss_acc"`}},
		{"lr zero", "[optimizer]\nlr = 0\n", []string{"optimizer.lr = 0: expected a number > 0"}},
		{"lr inf", "[optimizer]\nlr = inf\n", []string{"optimizer.lr = +Inf: expected a number > 0"}},
		{"weight decay", "[optimizer]\nweight_decay = -1e-4\n", []string{"optimizer.weight_decay = -0.0001: expected a number >= 0"}},
		{"beta2", "[optimizer]\nbeta2 = 1\n", []string{"optimizer.beta2 = 1: expected a number in [0, 1)"}},
		{"eps", "[optimizer]\neps = 0\n", []string{"optimizer.eps = 0: expected a number > 0"}},
		{"optimizer", "[optimizer]\nname = \"rmsprop\"\n", []string{`optimizer.name = "rmsprop": expected one of "adam", "adamw", "sgd"`}},
		{"source", "[dataset]\nsource = \"reddit\"\n", []string{`dataset.source = "reddit": expected one of "cora", "citeseer", "planetoid", "sbm", "rmat"`}},
		{"planetoid without path", "[dataset]\nsource = \"planetoid\"\n", []string{`dataset.source = "planetoid" needs dataset.path`}},
		{"sbm nodes", "[dataset]\nsource = \"sbm\"\n[dataset.sbm]\nnodes = 1\n", []string{"dataset.sbm.nodes = 1: expected an integer in [classes = 8, 2147483647]"}},
		{"sbm classes", "[dataset]\nsource = \"sbm\"\n[dataset.sbm]\nclasses = 1\n", []string{"dataset.sbm.classes = 1: expected an integer >= 2"}},
		{"sbm homophily", "[dataset]\nsource = \"sbm\"\n[dataset.sbm]\nhomophily = 1.5\n", []string{"dataset.sbm.homophily = 1.5: expected a number in [0, 1]"}},
		{"sbm fractions", "[dataset]\nsource = \"sbm\"\n[dataset.sbm]\ntrain_fraction = 0.9\n", []string{"dataset.sbm.train_fraction + val_fraction + test_fraction = 1.4: expected at most 1"}},
		{"sbm train fraction", "[dataset]\nsource = \"sbm\"\n[dataset.sbm]\ntrain_fraction = 0\n", []string{"dataset.sbm.train_fraction = 0: expected a number in (0, 1]"}},
		{"rmat scale", "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = 0\n", []string{"dataset.rmat.scale = 0: expected an integer in [1, 30]"}},
		{"rmat abc", "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\na = 0.9\n", []string{"dataset.rmat.a + b + c = 1.28: expected at most 1"}},
		{"minibatch without batch", "[train]\nmode = \"minibatch\"\n", []string{`train.mode = "minibatch" needs a batch size`, "train.batch_size", "train.batch_ratio"}},
		{"minibatch two batch sizes", "[train]\nmode = \"minibatch\"\nbatch_size = 10\nbatch_ratio = 0.5\n", []string{"set only one of them"}},
		{"batch size zero", "[train]\nmode = \"minibatch\"\nbatch_size = -3\n", []string{"train.batch_size = -3: expected an integer >= 1"}},
		{"batch ratio", "[train]\nmode = \"minibatch\"\nbatch_ratio = 1.5\n", []string{"train.batch_ratio = 1.5: expected a number in (0, 1]"}},
		{"batch in full graph", "[train]\nbatch_size = 100\n", []string{`set train.mode = "minibatch" or remove them`}},
		{"steps per epoch", "[train]\nmode = \"minibatch\"\nbatch_size = 10\nsteps_per_epoch = -1\n", []string{"train.steps_per_epoch = -1: expected an integer >= 0"}},
		{"comm dtype", "[train]\ncomm_dtype = \"fp16\"\n", []string{`train.comm_dtype = "fp16": expected one of "float32", "bf16"`}},
		{"bf16 on one rank", "[train]\ncomm_dtype = \"bf16\"\n", []string{`train.comm_dtype = "bf16" compresses the all-reduces inside a 3D grid, and a 1x1x1 grid has none`}},
		{"mode", "[train]\nmode = \"full\"\n", []string{`train.mode = "full": expected one of "fullgraph", "minibatch"`}},
		{"epochs", "[train]\nepochs = 0\n", []string{"train.epochs = 0: expected an integer >= 1"}},
		{"eval every", "[train]\neval_every = 0\n", []string{"train.eval_every = 0: expected an integer >= 1"}},
		{"grid x", "[grid]\nx = 0\n", []string{"grid.x = 0: expected an integer >= 1"}},
		{"grid z", "[grid]\nz = -2\n", []string{"grid.z = -2: expected an integer >= 1"}},
		{"grid d", "[grid]\nd = 2\n", []string{"grid.d = 2: expected 1 in full-graph training"}},
		{"permute", "[permute]\nscheme = \"triple\"\n", []string{`permute.scheme = "triple": expected one of "none", "single", "double"`}},
		{"output dir", "[output]\ndir = \"\"\n", []string{`output.dir = "": expected a non-empty directory path`}},
		{"threads", "[runtime]\nthreads = -1\n", []string{"runtime.threads = -1: expected an integer >= 0"}},
	} {
		_, err := ParseConfig("job.toml", []byte(test.data))
		if err == nil {
			t.Errorf("%s: no error for %q", test.name, test.data)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: message has more than one line: %q", test.name, msg)
		}
		if !strings.HasPrefix(msg, "job.toml: ") {
			t.Errorf("%s: message does not start with the file name: %q", test.name, msg)
		}
		for _, w := range test.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q does not contain %q", test.name, msg, w)
			}
		}
	}
}

// Sub-tables of unselected sources are not validated: switching source must
// not force the user to delete or fix the other generator's settings.
func TestUnselectedSubTableNotValidated(t *testing.T) {
	data := "[dataset]\nsource = \"cora\"\n[dataset.sbm]\nnodes = -5\n[dataset.rmat]\nscale = 99\n"
	if _, err := ParseConfig("job.toml", []byte(data)); err != nil {
		t.Errorf("unexpected error: %v", err)
	}
}

func TestDatasetPathRelativeToJobFile(t *testing.T) {
	data := []byte("[dataset]\nsource = \"planetoid\"\npath = \"data/pubmed\"\n")
	c, err := ParseConfig(filepath.Join("jobs", "pubmed.toml"), data)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("jobs", "data", "pubmed"); c.Dataset.Path != want {
		t.Errorf("dataset.path = %q, want %q", c.Dataset.Path, want)
	}
	abs := filepath.Join(t.TempDir(), "pubmed")
	c, err = ParseConfig("jobs/pubmed.toml", []byte("[dataset]\nsource = \"planetoid\"\npath = \""+filepath.ToSlash(abs)+"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Dataset.Path != abs {
		t.Errorf("dataset.path = %q, want %q", c.Dataset.Path, abs)
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	_, err := LoadConfig(filepath.Join(t.TempDir(), "nope.toml"))
	if err == nil || !strings.Contains(err.Error(), "nope.toml") {
		t.Errorf("got %v, want an error naming the file", err)
	}
}

func TestCheckWorld(t *testing.T) {
	c := DefaultConfig()
	c.Path = "job.toml"
	c.Grid = GridConfig{X: 2, Y: 2, Z: 1, D: 1}
	if err := c.CheckWorld(4); err != nil {
		t.Errorf("CheckWorld(4): %v", err)
	}
	err := c.CheckWorld(8)
	want := "job.toml: grid 2x2x1 (d=1) has 4 ranks but the job was started with 8: set grid.x*grid.y*grid.z*grid.d = 8"
	if err == nil || err.Error() != want {
		t.Errorf("CheckWorld(8) = %v, want %q", err, want)
	}
}

func TestGridRanksSaturates(t *testing.T) {
	g := GridConfig{X: 1 << 40, Y: 1 << 40, Z: 1, D: 1}
	if g.Ranks() <= 0 {
		t.Errorf("Ranks() = %d overflowed", g.Ranks())
	}
}

func TestMetricsPath(t *testing.T) {
	c := DefaultConfig()
	if got, want := c.MetricsPath(), filepath.Join("runs", "default", "metrics.jsonl"); got != want {
		t.Errorf("MetricsPath() = %q, want %q", got, want)
	}
}

func TestWriteTOMLRoundTrip(t *testing.T) {
	c, err := LoadConfig("../examples/sbm.toml")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.WriteTOML(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ParseConfig(c.Path, buf.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(back, c) {
		t.Errorf("round trip changed the config:\n got %+v\nwant %+v", back, c)
	}
}

func TestSummary(t *testing.T) {
	c, err := LoadConfig("../examples/sbm.toml")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zap.InfoLevel))
	log.Info("job", c.Summary()...)
	out := buf.String()
	for _, w := range []string{`"nodes":20000`, `"hidden":128`, `"scheme":"double"`, `"x":2`} {
		if !strings.Contains(out, w) {
			t.Errorf("summary %s lacks %s", out, w)
		}
	}
	if strings.Contains(out, `"rmat"`) {
		t.Errorf("summary of an sbm job shows the rmat table: %s", out)
	}
}

// TestNormalizeFeaturesDefault checks that row normalisation is on by
// default for the citation datasets and off for the generators (Gaussian
// features), that a job file's own setting wins, and that asking for it on
// features with negative values is refused with the key to change.
func TestNormalizeFeaturesDefault(t *testing.T) {
	for _, tc := range []struct {
		file string
		want bool
	}{
		{"", true},
		{"[dataset]\nsource = \"citeseer\"\n", true},
		{"[dataset]\nsource = \"sbm\"\n", false},
		{"[dataset]\nsource = \"rmat\"\n", false},
		{"[dataset]\nsource = \"sbm\"\nnormalize_features = true\n", true},
		{"[dataset]\nnormalize_features = false\n", false},
	} {
		c, err := ParseConfig("job.toml", []byte(tc.file))
		if err != nil {
			t.Fatalf("%q: %v", tc.file, err)
		}
		if c.Dataset.NormalizeFeatures != tc.want {
			t.Errorf("%q: normalize_features = %v, want %v", tc.file, c.Dataset.NormalizeFeatures, tc.want)
		}
	}
	c, err := ParseConfig("job.toml", []byte("[dataset]\nsource = \"sbm\"\nnormalize_features = true\n[dataset.sbm]\nnodes = 200\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = LoadGraph(c.Dataset)
	if err == nil || !strings.Contains(err.Error(), "negative values") || !strings.Contains(err.Error(), "set normalize_features = false") {
		t.Errorf("normalising the SBM's Gaussian features: got %v, want a refusal naming the key", err)
	}
	c.Dataset.NormalizeFeatures = false
	if _, err := LoadGraph(c.Dataset); err != nil {
		t.Errorf("without normalisation: %v", err)
	}
}

// TestNormalizePrepared: a prepared dataset made by a generator is not
// normalised unless the job file asks; one from a citation dataset is by
// default; the job file's setting wins either way.
func TestNormalizePrepared(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig().Dataset.SBMConfig()
	cfg.N = 50
	g, err := dataset.SBM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"sbm", "builtin"} {
		if _, err := prepared.Prepare(&prepared.GraphInput{G: g, Format: format}, filepath.Join(dir, format), prepared.Options{Blocks: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		file string
		want bool
	}{
		{"[dataset]\nsource = \"prepared\"\npath = \"sbm\"\n", false},
		{"[dataset]\nsource = \"prepared\"\npath = \"builtin\"\n", true},
		{"[dataset]\nsource = \"prepared\"\npath = \"sbm\"\nnormalize_features = true\n", true},
		{"[dataset]\nsource = \"prepared\"\npath = \"builtin\"\nnormalize_features = false\n", false},
	} {
		c, err := ParseConfig(filepath.Join(dir, "job.toml"), []byte(tc.file))
		if err != nil {
			t.Fatalf("%q: %v", tc.file, err)
		}
		if c.Dataset.NormalizeFeatures != tc.want {
			t.Errorf("%q: normalize_features = %v, want %v", tc.file, c.Dataset.NormalizeFeatures, tc.want)
		}
	}
}
