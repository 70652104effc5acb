package main

import (
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/jobfile"
	"scalegnn/perfmodel"
	"scalegnn/plan"
	"scalegnn/prepared"
	"scalegnn/record"
)

// writeJob writes a job file training from the prepared dataset ds into
// out and returns its path.
func writeJob(t *testing.T, dir, source, ds, out, extra string) string {
	t.Helper()
	text := fmt.Sprintf(`[dataset]
source = %q
path = %q

[train]
epochs = 4
eval_every = 2

[output]
dir = %q
%s`, source, ds, out, extra)
	path := filepath.Join(dir, filepath.Base(out)+".toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPrepareNumpyAndTrain prepares the numpy fixture (edge list + .npy
// arrays written as numpy.save writes them) with the command line, prints
// its info and trains a job from it.
func TestPrepareNumpyAndTrain(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	code, stderr := runMain(t, "prepare", "-format", "edgelist", "-in", filepath.Join("prepared", "testdata", "numpy", "edges.txt"),
		"-out", ds, "-blocks", "3", "-permute", "single", "-seed", "4")
	if code != 0 || !strings.Contains(stderr, "prepare: wrote "+ds) {
		t.Fatalf("prepare: exit %d\n%s", code, stderr)
	}
	code, stderr = runMain(t, "dataset", "info", ds, "-grid", "1x2x3")
	if code != 0 {
		t.Fatalf("dataset info: exit %d\n%s", code, stderr)
	}
	job := writeJob(t, dir, "prepared", ds, filepath.Join(dir, "out"), "[permute]\nscheme = \"single\"\nseed = 4\n")
	code, stderr = runMain(t, "-config", job)
	if code != 0 || !strings.Contains(stderr, "done") {
		t.Fatalf("training: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "summary.json")); err != nil {
		t.Fatal(err)
	}
	// The permutation is fixed at prepare time.
	bad := writeJob(t, dir, "prepared", ds, filepath.Join(dir, "bad"), "")
	code, stderr = runMain(t, "-config", bad)
	if lines := errorLines(stderr); code == 0 || len(lines) != 1 || !strings.Contains(lines[0], `set [permute] scheme = "single", seed = 4`) {
		t.Fatalf("permutation mismatch: exit %d\n%s", code, stderr)
	}
}

// TestPreparedJobMatchesInMemory trains Cora from memory and from a
// prepared dataset through the command line and compares the metrics.
func TestPreparedJobMatchesInMemory(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "cora")
	if code, stderr := runMain(t, "prepare", "-q", "-format", "builtin", "-in", "cora", "-out", ds, "-blocks", "2"); code != 0 {
		t.Fatalf("prepare: exit %d\n%s", code, stderr)
	}
	for _, j := range []string{writeJob(t, dir, "cora", "", filepath.Join(dir, "mem"), ""), writeJob(t, dir, "prepared", ds, filepath.Join(dir, "prep"), "")} {
		if code, stderr := runMain(t, "-config", j); code != 0 {
			t.Fatalf("%s: exit %d\n%s", j, code, stderr)
		}
	}
	a, err := record.ReadMetrics(filepath.Join(dir, "mem", "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := record.ReadMetrics(filepath.Join(dir, "prep", "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 4 || len(b) != 4 {
		t.Fatalf("%d and %d epochs", len(a), len(b))
	}
	for e := range a {
		same := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
		if a[e].Loss != b[e].Loss || !same(a[e].TestAcc, b[e].TestAcc) || !same(a[e].ValAcc, b[e].ValAcc) {
			t.Fatalf("epoch %d: %+v in memory, %+v prepared", e+1, a[e], b[e])
		}
	}
}

// TestPrepareBadInput: every kind of bad source gets one line naming the
// file (and the line) and what was expected, a non-zero exit, and no
// partial output directory.
func TestPrepareBadInput(t *testing.T) {
	dir := t.TempDir()
	fix := filepath.Join("prepared", "testdata", "numpy")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gz := func(name, text string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		f, _ := os.Create(p)
		z := gzip.NewWriter(f)
		z.Write([]byte(text))
		z.Close()
		f.Close()
	}
	el := func(edges string, more ...string) []string {
		return append([]string{"-format", "edgelist", "-in", edges, "-features", filepath.Join(fix, "features.npy"), "-labels", filepath.Join(fix, "labels.npy")}, more...)
	}
	// An OGB dataset whose edge file has a bad line 3.
	gz("ogb/raw/num-node-list.csv.gz", "12\n")
	gz("ogb/raw/edge.csv.gz", "0,1\n1,2\n2;3\n")
	gz("ogb/raw/node-feat.csv.gz", strings.Repeat("1,2\n", 12))
	gz("ogb/raw/node-label.csv.gz", strings.Repeat("1\n", 12))
	for k, s := range []string{"train", "valid", "test"} {
		gz("ogb/split/s/"+s+".csv.gz", fmt.Sprintf("%d\n", k))
	}
	existing := filepath.Join(dir, "existing")
	os.Mkdir(existing, 0o755)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"edge line", el(write("e1.txt", "0 1\n1 2\n2 x\n")), "e1.txt:3: expected \"<u> <v>\" with integer vertex ids in [0, 12)"},
		{"edge range", el(write("e2.txt", "# c\n0 12\n")), "e2.txt:2: expected"},
		{"weight", el(write("e3.txt", "0 1 1\n1 2 inf\n")), "e3.txt:2: expected a finite float32 weight"},
		{"fields", el(write("e4.txt", "0 1\n1 2 3\n")), "e4.txt:2: expected \"<u> <v>\" (as on the first edge line)"},
		{"labels shape", el(filepath.Join(fix, "edges.txt"), "-labels", filepath.Join(fix, "val.npy")), "val.npy: shape [3]: expected (12,)"},
		{"not npy", el(filepath.Join(fix, "edges.txt"), "-train", filepath.Join(fix, "edges.txt")), "edges.txt: not a .npy file"},
		{"ids", el(filepath.Join(fix, "edges.txt"), "-train", filepath.Join(fix, "test.npy"), "-test", filepath.Join(fix, "test.npy")), "test.npy: vertex 7 is in another split too"},
		{"classes", el(filepath.Join(fix, "edges.txt"), "-classes", "2"), "labels.npy: label 2: expected classes in [0, 2)"},
		{"edges missing", []string{"-format", "edgelist", "-in", filepath.Join(dir, "missing.txt")}, "prepare: edge list: stat " + filepath.Join(dir, "missing.txt") + ": no such file or directory"},
		{"ogb line", []string{"-format", "ogb", "-in", filepath.Join(dir, "ogb")}, "edge.csv.gz:3: expected \"<u>,<v>\""},
		{"ogb missing", []string{"-format", "ogb", "-in", dir, "-split", "s"}, "num-node-list.csv.gz: no such file (nor num-node-list.csv): expected the OGB raw layout"},
		{"planetoid", []string{"-format", "planetoid", "-in", filepath.Join("testdata", "badinput", "bad_line")}, "bad_line/labels.txt:3"},
		{"builtin", []string{"-format", "builtin", "-in", "pubmed"}, `unknown built-in dataset "pubmed"`},
		{"rmat key", []string{"-format", "rmat", "-in", "scale=4,edge_factr=2"}, "unknown key dataset.rmat.edge_factr: did you mean dataset.rmat.edge_factor?"},
		{"exists", []string{"-format", "builtin", "-in", "cora", "-out", existing}, "already exists"},
		{"force", []string{"-format", "builtin", "-in", "cora", "-out", existing, "-force"}, "is not a valid prepared dataset"},
		{"blocks", []string{"-format", "builtin", "-in", "cora", "-blocks", "0"}, "-blocks 0: expected an integer in [1, 256]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"prepare", "-q"}, c.args...)
			if !strings.Contains(strings.Join(args, " "), "-out") {
				args = append(args, "-out", filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-")))
			}
			code, stderr := runMain(t, args...)
			lines := errorLines(stderr)
			if code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "scalegnn: ") || !strings.Contains(lines[0], c.want) {
				t.Fatalf("exit %d, want 1 and one line containing %q; stderr:\n%s", code, c.want, stderr)
			}
		})
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "out-") || strings.Contains(e.Name(), ".partial-") {
			t.Errorf("a failed prepare left %s behind", e.Name())
		}
	}
	if ents, _ := os.ReadDir(existing); len(ents) != 0 {
		t.Error("the existing directory was touched")
	}
}

// TestCorruptPrepared trains from testdata/badinput/corrupt_prepared (one
// flipped byte in a block; scripts/badinput.sh runs it on 8 ranks): one
// error line naming the file.
func TestCorruptPrepared(t *testing.T) {
	code, stderr := runMain(t, "-config", filepath.Join("testdata", "badinput", "corrupt_prepared.toml"))
	lines := errorLines(stderr)
	if code == 0 || len(lines) != 1 || !strings.Contains(lines[0], "corrupt_prepared/adj0/r1c1.data.npy: SHA-256 mismatch") {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
}

// TestPrepareDType: prepare -dtype bf16 writes bfloat16 features that
// dataset info reports and the performance model counts at 2 bytes a
// feature read out of core; float32 is the default and writes no
// feature_dtype; another -dtype is a usage error of one line.
func TestPrepareDType(t *testing.T) {
	dir := t.TempDir()
	sizes := map[string]int64{}
	for _, dt := range []string{"", "float32", "bf16"} {
		out := filepath.Join(dir, "ds-"+dt)
		args := []string{"prepare", "-q", "-format", "builtin", "-in", "cora", "-blocks", "2", "-permute", "single", "-out", out}
		if dt != "" {
			args = append(args, "-dtype", dt)
		}
		if code, stderr := runMain(t, args...); code != 0 {
			t.Fatalf("-dtype %q: exit %d\n%s", dt, code, stderr)
		}
		m, err := prepared.ReadMeta(out)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"": "", "float32": "", "bf16": "bf16"}[dt]; m.FeatureDType != want {
			t.Errorf("-dtype %q: feature_dtype %q, want %q", dt, m.FeatureDType, want)
		}
		for _, f := range m.Files {
			if strings.HasPrefix(f.Path, "features/") {
				sizes[dt] += f.Bytes
			}
		}
		j := preparedPerfJob(t, out)
		j.Isolated.OutOfCore = true
		v, _ := j.IsolatedSize(2)
		f32 := j
		f32.FeatureBytes = 0
		if d := f32.OutOfCoreReadBytes(2) - j.OutOfCoreReadBytes(2); d != float64(4-m.FeatureBytes())*float64(m.Features)*v {
			t.Errorf("-dtype %q: out-of-core read predicted %g bytes below float32's, want %g", dt, d, float64(4-m.FeatureBytes())*float64(m.Features)*v)
		}
	}
	// Headers of the same length: the data is half.
	if sizes[""] != sizes["float32"] || sizes["bf16"]-2*128 != (sizes["float32"]-2*128)/2 {
		t.Errorf("feature files: %d bytes by default, %d float32, %d bf16", sizes[""], sizes["float32"], sizes["bf16"])
	}
	cmd := exec.Command(os.Args[0], "dataset", "info", filepath.Join(dir, "ds-bf16"))
	cmd.Env = append(os.Environ(), "SCALEGNN_AS_MAIN=1")
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "features     1433 (bf16, 2 bytes each on disk)") {
		t.Errorf("dataset info: %v\n%s", err, out)
	}
	code, stderr := runMain(t, "prepare", "-format", "builtin", "-in", "cora", "-dtype", "fp16", "-out", filepath.Join(dir, "x"))
	if lines := errorLines(stderr); code != 2 || len(lines) != 1 || !strings.Contains(lines[0], `-dtype "fp16": expected float32 or bf16`) {
		t.Errorf("-dtype fp16: exit %d, stderr:\n%s", code, stderr)
	}
}

// preparedPerfJob is the performance model's job of the default job file
// on the prepared dataset at dir, sized from its meta.toml.
func preparedPerfJob(t *testing.T, dir string) perfmodel.Job {
	t.Helper()
	cfg := jobfile.DefaultConfig()
	cfg.Dataset.Source, cfg.Dataset.Path = jobfile.SourcePrepared, dir
	gs, err := plan.EstimateGraphSize(cfg.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	return plan.PerfJob(&cfg, gs)
}

// TestLayerwiseReadBytesMatchesDataset: the performance model's bytes of
// an out-of-core layer-wise evaluation's strips are the adjacency files
// of a prepared dataset with one block per chunk: every row's pointer in
// each column block and 8 bytes a nonzero, each layer (the files add one
// pointer a block and their headers). Counting one pointer a row, as the
// model did, falls short by (C-1)·8·N.
func TestLayerwiseReadBytesMatchesDataset(t *testing.T) {
	const blocks = 4
	out := filepath.Join(t.TempDir(), "ds")
	if code, stderr := runMain(t, "prepare", "-q", "-format", "builtin", "-in", "cora", "-blocks", fmt.Sprint(blocks), "-permute", "single", "-out", out); code != 0 {
		t.Fatalf("prepare: exit %d\n%s", code, stderr)
	}
	m, err := prepared.ReadMeta(out)
	if err != nil {
		t.Fatal(err)
	}
	var files int64
	for _, f := range m.Files {
		if strings.HasPrefix(f.Path, "adj0/") {
			files += f.Bytes
		}
	}
	j := preparedPerfJob(t, out)
	j.Isolated.OutOfCore, j.Isolated.Layerwise, j.Isolated.Chunks = true, true, blocks
	fewer := j // one layer less: the difference is a layer's strips
	fewer.Layers--
	strips := j.LayerwiseReadBytes(1) - fewer.LayerwiseReadBytes(1)
	slack := float64(blocks * blocks * (8 + 3*256)) // a pointer and three headers a block file
	if !(strips <= float64(files) && float64(files) <= strips+slack) {
		t.Errorf("a layer's strips: %.0f bytes predicted, the adjacency files hold %d (want at most %.0f more)", strips, files, slack)
	}
}
