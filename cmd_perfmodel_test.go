package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"scalegnn/internal/launch"
	"scalegnn/perfmodel"
)

// perfmodelCmd runs scalegnn perfmodel in-process (predict and score need
// no MPI) and returns the exit code, stdout and stderr.
func perfmodelCmd(args ...string) (launch.ExitCode, string, string) {
	var out, errw bytes.Buffer
	code := runPerfmodel(args, &out, &errw)
	return code, out.String(), errw.String()
}

// TestPerfmodelPredict predicts the R-MAT example on 8 ranks: ten grids,
// a recommendation, valid JSON with the same ranking, and a plot file.
func TestPerfmodelPredict(t *testing.T) {
	code, out, errs := perfmodelCmd("predict", "-config", "examples/rmat.toml", "-ranks", "8", "-top", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "recommended grid: ") || strings.Count(out, "yes") != 10 {
		t.Errorf("table:\n%s", out)
	}
	plot := filepath.Join(t.TempDir(), "grids.png")
	code, out, errs = perfmodelCmd("predict", "-config", "examples/rmat.toml", "-ranks", "12", "-json", "-plot", plot, "-machine", "perlmutter-plexus", "-ranks-per-node", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Predictions []struct {
			Grid  string  `json:"grid"`
			Epoch float64 `json:"epoch_s"`
		} `json:"predictions"`
		Recommended struct {
			Grid string `json:"grid"`
		} `json:"recommended"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if len(doc.Predictions) != 18 || doc.Recommended.Grid != doc.Predictions[0].Grid {
		t.Errorf("%d predictions (want 18, the ordered factorisations of 12), recommended %q, first %q",
			len(doc.Predictions), doc.Recommended.Grid, doc.Predictions[0].Grid)
	}
	if st, err := os.Stat(plot); err != nil || st.Size() == 0 {
		t.Errorf("plot %s: %v", plot, err)
	}
}

// TestPerfmodelBadInput: every mistake ends with a non-zero exit and one
// line that names the flag, file or field.
func TestPerfmodelBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"predict", "-config", "examples/rmat.toml", "-ranks", "0"}, "-ranks 0: expected the number of ranks"},
		{[]string{"predict", "-config", "examples/rmat.toml", "-ranks", "-4"}, "-ranks -4: expected the number of ranks"},
		{[]string{"predict", "-config", "testdata/perfmodel/minibatch.toml", "-ranks", "8", "-d", "3"}, "Gd = 3 does not divide 8 ranks: expected a divisor of 8 ([1 2 4 8])"},
		{[]string{"predict", "-config", "examples/rmat.toml", "-ranks", "8", "-d", "2"}, "full-graph training has no data-parallel replicas"},
		{[]string{"predict", "-config", "examples/rmat.toml", "-ranks", "8", "-mem-per-rank", "1MiB"}, "examples/rmat.toml: perfmodel: no grid fits in 1MiB per rank: the smallest need is"},
		{[]string{"predict", "-config", "examples/rmat.toml", "-ranks", "8", "-mem-per-rank", "lots"}, `-mem-per-rank "lots": expected a size`},
		{[]string{"predict", "-config", "examples/rmat.toml", "-ranks", "8", "-machine", "testdata/perfmodel/malformed.toml"}, "testdata/perfmodel/malformed.toml: line 3"},
		{[]string{"predict", "-config", "examples/rmat.toml", "-ranks", "8", "-machine", "testdata/perfmodel/missing_key.toml"}, "testdata/perfmodel/missing_key.toml: missing key comm.intra.latency_s"},
		{[]string{"predict", "-config", "examples/rmat.toml", "-ranks", "8", "-machine", "testdata/perfmodel/negative_bandwidth.toml"}, "testdata/perfmodel/negative_bandwidth.toml: comm.intra.bandwidth_gbs = -5: expected a finite number > 0"},
		{[]string{"predict", "-config", "examples/rmat.toml", "-ranks", "8", "-machine", "testdata/perfmodel/unknown_key.toml"}, "testdata/perfmodel/unknown_key.toml: unknown key gemm.nn.flop_s"},
		{[]string{"predict", "-config", "examples/rmat.toml", "-ranks", "8", "-machine", "testdata/perfmodel/nonexistent.toml"}, "machine profile: open testdata/perfmodel/nonexistent.toml"},
		{[]string{"predict", "-config", "examples/rmat.toml", "-ranks", "8", "-machine", "nosuchprofile"}, "no built-in profile of that name"},
		{[]string{"predict", "-config", "testdata/perfmodel/nonexistent.toml", "-ranks", "8"}, "reading job file"},
		{[]string{"predict", "-ranks", "8"}, "need -config job.toml"},
		{[]string{"predict", "-config", "testdata/perfmodel/minibatch.toml", "-ranks", "7", "-mem-per-rank", "64KiB"}, "no grid fits in 64KiB per rank"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	}
	for _, c := range cases {
		code, _, errs := perfmodelCmd(c.args...)
		if code == 0 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 && !strings.Contains(errs, "usage") {
			t.Errorf("scalegnn perfmodel %s: exit %d, stderr %q; want a non-zero exit and one line with %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
}

// algorithmJob writes a full-graph R-MAT job (single permutation, which
// both algorithms take) with extra appended, and returns its path.
func algorithmJob(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.toml")
	body := "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = 14\nfeatures = 32\nclasses = 4\n" +
		"[model]\nlayers = 3\nhidden = 64\n[permute]\nscheme = \"single\"\n" + extra
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPerfmodelPredictAlgorithms: a full-graph job without train.algorithm
// ranks the 10 3D grids and the 4 1.5D arrangements of 8 ranks together,
// each row and JSON entry naming its algorithm; train.algorithm = "1.5d"
// lists only 1.5D.
func TestPerfmodelPredictAlgorithms(t *testing.T) {
	for _, tc := range []struct {
		extra     string
		want      map[string]int
		wantTotal int
	}{
		{"", map[string]int{"3d": 10, "1.5d": 4}, 14},
		{"[train]\nalgorithm = \"1.5d\"\n", map[string]int{"1.5d": 4}, 4},
		{"[train]\nalgorithm = \"3d\"\n", map[string]int{"3d": 10}, 10},
	} {
		job := algorithmJob(t, tc.extra)
		code, out, errs := perfmodelCmd("predict", "-config", job, "-ranks", "8", "-json", "-machine", "dev-2core-8ranks")
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.extra, code, errs)
		}
		var doc struct {
			Predictions []struct {
				Algorithm string  `json:"algorithm"`
				Grid      string  `json:"grid"`
				Epoch     float64 `json:"epoch_s"`
			} `json:"predictions"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("JSON: %v\n%s", err, out)
		}
		got := map[string]int{}
		for i, p := range doc.Predictions {
			got[p.Algorithm]++
			if i > 0 && doc.Predictions[i-1].Epoch > p.Epoch {
				t.Errorf("%q: %s %s ranked after a slower one", tc.extra, p.Algorithm, p.Grid)
			}
		}
		if len(doc.Predictions) != tc.wantTotal || len(got) != len(tc.want) {
			t.Errorf("%q: predictions per algorithm %v, want %v", tc.extra, got, tc.want)
		}
		for a, n := range tc.want {
			if got[a] != n {
				t.Errorf("%q: %d %s predictions, want %d", tc.extra, got[a], a, n)
			}
		}
		code, out, _ = perfmodelCmd("predict", "-config", job, "-ranks", "8", "-top", "0", "-machine", "dev-2core-8ranks")
		if code != 0 || (tc.want["1.5d"] > 0) != strings.Contains(out, " 1.5d  1.5d 4x2 ") || !strings.Contains(out, "algorithm") {
			t.Errorf("%q: table without the algorithm column or the 1.5d rows:\n%s", tc.extra, out)
		}
	}
}

// fakeRun writes a completed run directory: summary.json with the given
// algorithm, grid and replication, and epochs of the given seconds.
func fakeRun(t *testing.T, dir, algorithm, grid string, replication int, epochs ...float64) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var m strings.Builder
	for i, s := range epochs {
		fmt.Fprintf(&m, "{\"epoch\": %d, \"loss\": 1, \"epoch_s\": %g}\n", i+1, s)
	}
	sum := fmt.Sprintf(`{"status": "completed", "epochs": %d, "epochs_run": %d, "grid": %q, "ranks": 8, "mode": "fullgraph", "algorithm": %q, "replication": %d}`,
		len(epochs), len(epochs), grid, algorithm, replication)
	if algorithm == "" {
		sum = fmt.Sprintf(`{"status": "completed", "epochs": %d, "epochs_run": %d, "grid": %q, "ranks": 8, "mode": "fullgraph"}`, len(epochs), len(epochs), grid)
	}
	for name, body := range map[string]string{"metrics.jsonl": m.String(), "summary.json": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPerfmodelScoreAlgorithms: score matches each run to the prediction
// of its algorithm, grid and replication (a summary without an algorithm
// is a 3D run), so a 3D 8x1x1 run and a 1.5D run on x = 8 with c = 2 are
// told apart; a 1.5D run scored against a 3D-only job is refused in one
// line naming the run.
func TestPerfmodelScoreAlgorithms(t *testing.T) {
	dir := t.TempDir()
	runs := []string{
		fakeRun(t, filepath.Join(dir, "a"), "3d", "8x1x1 (d=1)", 0, 9, 2),
		fakeRun(t, filepath.Join(dir, "b"), "", "2x2x2 (d=1)", 0, 9, 1),
		fakeRun(t, filepath.Join(dir, "c"), "1.5d", "8x1x1 (d=1)", 2, 9, 3),
		fakeRun(t, filepath.Join(dir, "d"), "1.5d", "8x1x1 (d=1)", 1, 9, 4),
	}
	job := algorithmJob(t, "")
	code, out, errs := perfmodelCmd(append([]string{"score", "-config", job, "-ranks", "8", "-machine", "dev-2core-8ranks", "-json"}, runs...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Grids []struct {
			Algorithm string  `json:"algorithm"`
			Grid      string  `json:"grid"`
			Measured  float64 `json:"measured_s"`
		} `json:"grids"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	want := map[string]float64{"3d 8x1x1": 2, "3d 2x2x2": 1, "1.5d 1.5d 4x2": 3, "1.5d 1.5d 8x1": 4}
	for _, g := range doc.Grids {
		k := g.Algorithm + " " + g.Grid
		if w, ok := want[k]; !ok || w != g.Measured {
			t.Errorf("%s measured %g; want %v", k, g.Measured, want)
		}
		delete(want, k)
	}
	if len(want) != 0 {
		t.Errorf("runs not matched: %v", want)
	}
	// -skip-epochs 0 averages the warm-up epoch (9 s) in too.
	code, out, errs = perfmodelCmd(append([]string{"score", "-config", job, "-ranks", "8", "-skip-epochs", "0", "-json"}, runs[:2]...)...)
	if code != 0 || !strings.Contains(out, `"measured_s": 5.5`) {
		t.Errorf("-skip-epochs 0: exit %d, %s %s; want 3d 8x1x1 measured 5.5", code, out, errs)
	}
	// -median over epochs 2..4 of 9, 1, 7, 3 s: 3 s (the mean would be 3.67).
	fakeRun(t, filepath.Join(dir, "e"), "3d", "4x2x1 (d=1)", 0, 9, 1, 7, 3)
	code, out, errs = perfmodelCmd("score", "-config", job, "-ranks", "8", "-median", "-json", runs[0], filepath.Join(dir, "e"))
	if code != 0 || !strings.Contains(out, `"measured_s": 3,`) {
		t.Errorf("-median: exit %d, %s %s; want 3d 4x2x1 measured 3", code, out, errs)
	}
	code, _, errs = perfmodelCmd("score", "-config", algorithmJob(t, "[train]\nalgorithm = \"3d\"\n"), "-ranks", "8", runs[2])
	if code == 0 || !strings.Contains(errs, runs[2]+": 1.5d grid") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("a 1.5d run against a 3d-only job: exit %d, %q", code, errs)
	}
}

// TestPerfmodelPredictCAGNETRefusesD: -d 2 for a full-graph 1.5D-only job
// is one line saying full-graph training has no data-parallel replicas.
func TestPerfmodelPredictCAGNETRefusesD(t *testing.T) {
	code, _, errs := perfmodelCmd("predict", "-config", algorithmJob(t, "[train]\nalgorithm = \"1.5d\"\n"), "-ranks", "8", "-d", "2")
	if code == 0 || !strings.Contains(errs, "Gd = 2: full-graph 1.5D has no data-parallel replicas") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("exit %d, %q; want one line refusing Gd = 2", code, errs)
	}
}

// TestPerfmodelPredictStaysInMode: a neighbor job's listing holds the 4D
// grids, neighbor and isolated rows, but the recommendation is the job's
// own mode, and a faster row of another mode is named beside it, not
// recommended (the default profile predicts Cora faster on a 3D grid).
func TestPerfmodelPredictStaysInMode(t *testing.T) {
	code, out, errs := perfmodelCmd("predict", "-config", "examples/cora-neighbor-8.toml", "-ranks", "8", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Predictions []struct {
			Algorithm string `json:"algorithm"`
		} `json:"predictions"`
		Recommended struct {
			Algorithm string `json:"algorithm"`
		} `json:"recommended"`
		Other *struct {
			Algorithm string  `json:"algorithm"`
			Epoch     float64 `json:"epoch_s"`
		} `json:"fastest_other_mode"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, p := range doc.Predictions {
		seen[p.Algorithm] = true
	}
	if !seen["3d"] || !seen["neighbor"] || !seen["isolated"] || seen["1.5d"] {
		t.Errorf("a neighbor job lists %v, want 3d, neighbor and isolated", seen)
	}
	if doc.Recommended.Algorithm != "neighbor" {
		t.Errorf("recommended %q for a neighbor job, want neighbor", doc.Recommended.Algorithm)
	}
	if doc.Predictions[0].Algorithm != "neighbor" && (doc.Other == nil || doc.Other.Algorithm != doc.Predictions[0].Algorithm) {
		t.Errorf("the fastest row is %s but fastest_other_mode is %+v", doc.Predictions[0].Algorithm, doc.Other)
	}
	code, text, _ := perfmodelCmd("predict", "-config", "examples/cora-neighbor-8.toml", "-ranks", "8")
	if code != 0 || !strings.Contains(text, "recommended grid: neighbor Gd=8") {
		t.Errorf("table:\n%s", text)
	}
}

// TestPerfmodelPredictTooManyRanks: more ranks than vertices are refused
// at once, in one line saying why (it used to search for 423 s and
// recommend 500x250x8 for Cora's 2,708 vertices).
func TestPerfmodelPredictTooManyRanks(t *testing.T) {
	t0 := time.Now()
	code, _, errs := perfmodelCmd("predict", "-config", "examples/cora.toml", "-ranks", "1000000")
	took := time.Since(t0)
	want := "1000000 ranks for a graph of 2708 vertices: more ranks than vertices leave every rank less than one vertex of work; choose at most 2708 ranks"
	if code == 0 || !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q: want one line saying %q", code, errs, want)
	}
	if took > 10*time.Second {
		t.Errorf("refused after %v, want within seconds", took)
	}
	// As many ranks as vertices still get a recommendation, quickly.
	t0 = time.Now()
	if code, out, errs := perfmodelCmd("predict", "-config", "examples/cora.toml", "-ranks", "2700", "-top", "1"); code != 0 || !strings.Contains(out, "recommended grid") {
		t.Fatalf("-ranks 2700: exit %d\n%s%s", code, out, errs)
	}
	if took := time.Since(t0); took > 30*time.Second {
		t.Errorf("-ranks 2700 took %v, want seconds", took)
	}
}

// TestPerfmodelPredictDiskColumn: an out-of-core isolated job's table has
// a disk_s column (its reads, predicted) and the JSON a disk_s; a job
// that reads nothing from disk keeps the usual columns.
func TestPerfmodelPredictDiskColumn(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "job.toml")
	text := "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = 20\nfeatures = 128\n[model]\nlayers = 3\nhidden = 32\n" +
		"[permute]\nscheme = \"single\"\n[train]\nmode = \"isolated\"\n[grid]\nd = 1\n[grappa]\nout_of_core = true\npartitions = 16\nchunks = 32\n"
	if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := perfmodelCmd("predict", "-config", job, "-ranks", "1", "-top", "0")
	if code != 0 || !strings.Contains(out, "disk_s") {
		t.Errorf("out-of-core job: exit %d, table without disk_s:\n%s%s", code, out, errs)
	}
	code, out, errs = perfmodelCmd("predict", "-config", job, "-ranks", "1", "-json")
	if code != 0 || !strings.Contains(out, `"disk_s"`) {
		t.Errorf("out-of-core job: exit %d, JSON without disk_s:\n%s%s", code, out, errs)
	}
	if code, out, _ := perfmodelCmd("predict", "-config", "examples/cora-8.toml", "-ranks", "8"); code != 0 || strings.Contains(out, "disk_s") {
		t.Errorf("a full-graph job: exit %d, table:\n%s", code, out)
	}
}

// TestPerfmodelPredictBF16: a bf16 job is priced with the profile's bf16
// costs (a smaller SpMM and GEMM time than the same job in float32), and
// with a profile that has none, as float32 with a note saying so.
func TestPerfmodelPredictBF16(t *testing.T) {
	dir := t.TempDir()
	base := "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = 14\nfeatures = 64\n[model]\nlayers = 2\nhidden = 64\n"
	jobs := map[string]string{"f32": base, "bf16": base + "[train]\nprecision = \"bf16\"\n"}
	m := perfmodel.DefaultMachine()
	sp := m.SpMM
	sp.NNZ, sp.FMA = sp.NNZ/2, sp.FMA/2
	m.BF16 = perfmodel.Products{SpMM: sp, GEMM: perfmodel.GEMMCosts{NN: m.GEMM.NN, TN: m.GEMM.TN, NT: m.GEMM.NT}}
	m.BF16.GEMM.NN.FMA /= 2
	profile := filepath.Join(dir, "machine-bf16.toml")
	if err := m.WriteFile(profile, "test"); err != nil {
		t.Fatal(err)
	}
	type row struct {
		SpMM float64 `json:"spmm_s"`
		GEMM float64 `json:"gemm_s"`
		Comm float64 `json:"comm_s"`
	}
	predict := func(name, machine string) (row, string, string) {
		path := filepath.Join(dir, name+".toml")
		if err := os.WriteFile(path, []byte(jobs[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"predict", "-config", path, "-ranks", "1", "-json"}
		if machine != "" {
			args = append(args, "-machine", machine)
		}
		code, out, errs := perfmodelCmd(args...)
		var doc struct {
			Precision   string `json:"precision"`
			Note        string `json:"note"`
			Recommended row    `json:"recommended"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
			t.Fatalf("%s on %s: exit %d\n%s%s", name, machine, code, out, errs)
		}
		if doc.Precision != map[string]string{"f32": "float32", "bf16": "bf16"}[name] {
			t.Errorf("%s: precision %q in the JSON", name, doc.Precision)
		}
		return doc.Recommended, doc.Note, out
	}
	f, note, _ := predict("f32", profile)
	b, bnote, _ := predict("bf16", profile)
	if note != "" || bnote != "" || !(b.SpMM < f.SpMM && b.GEMM < f.GEMM) || b.Comm != f.Comm {
		t.Errorf("with bf16 costs: bf16 %+v (note %q), float32 %+v (note %q)", b, bnote, f, note)
	}
	nb, nnote, _ := predict("bf16", "") // the built-in default machine
	nf, _, _ := predict("f32", "")
	if nb != nf || !strings.Contains(nnote, "machine default has no bf16 costs: its SpMMs and GEMMs are priced as float32") {
		t.Errorf("without bf16 costs: bf16 %+v, float32 %+v, note %q", nb, nf, nnote)
	}
	code, text, _ := perfmodelCmd("predict", "-config", filepath.Join(dir, "bf16.toml"), "-ranks", "1")
	if code != 0 || !strings.Contains(text, "\nnote: train.precision = \"bf16\", but machine default has no bf16 costs") {
		t.Errorf("table without the note:\n%s", text)
	}
}

// TestPerfmodelPredictJobLimit: without -mem-per-rank, predict holds the
// grids to the job's own grid.mem_per_rank, as its memory check will
// (the whole-graph rows of an out-of-core job do not fit, the isolated one
// does, and the header names the limit); -mem-per-rank overrides it, and
// the job's grid.machine is the profile unless -machine names another.
func TestPerfmodelPredictJobLimit(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "job.toml")
	text := "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = 20\nfeatures = 128\n[model]\nlayers = 3\nhidden = 32\n" +
		"[permute]\nscheme = \"single\"\n[train]\nmode = \"isolated\"\n[grid]\nd = 1\nmem_per_rank = \"1GiB\"\nmachine = \"dev-2core-1rank\"\n" +
		"[grappa]\nout_of_core = true\npartitions = 16\nchunks = 32\n"
	if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	fits := func(out string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) > 3 && (f[1] == "isolated" || f[1] == "3d" || f[1] == "neighbor") {
				m[f[1]] = f[len(f)-1]
			}
		}
		return m
	}
	code, out, errs := perfmodelCmd("predict", "-config", job, "-ranks", "1", "-top", "0")
	if code != 0 || !strings.Contains(out, "machine dev-2core-1rank, at most 1GiB per rank (grid.mem_per_rank = 1GiB)") {
		t.Fatalf("exit %d: header without the job's limit and profile:\n%s%s", code, out, errs)
	}
	if f := fits(out); f["isolated"] != "yes" || f["3d"] != "no" || f["neighbor"] != "no" {
		t.Errorf("fits under the job's 1GiB: %v, want isolated yes, 3d and neighbor no\n%s", f, out)
	}
	code, out, errs = perfmodelCmd("predict", "-config", job, "-ranks", "1", "-top", "0", "-mem-per-rank", "1TiB", "-machine", "dev-2core-8ranks")
	if code != 0 || !strings.Contains(out, "machine dev-2core-8ranks, at most 1TiB per rank (-mem-per-rank)") {
		t.Fatalf("exit %d: header without the flags' limit and profile:\n%s%s", code, out, errs)
	}
	if f := fits(out); f["isolated"] != "yes" || f["3d"] != "yes" {
		t.Errorf("fits under -mem-per-rank 1TiB: %v, want every row\n%s", f, out)
	}
}

// TestPerfmodelPredictCapacity: the capacity line and its JSON. A 3-layer
// GCN without dropout on one rank needs less memory in bf16 than in
// float32, so within a limit it fits a larger graph; the factors are the
// largest for which the same grid's prediction stays within the limit
// (checked one percent above, by -n and -nnz), and without a limit only
// the memory of both precisions is given.
func TestPerfmodelPredictCapacity(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "job.toml")
	job := "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = 16\nfeatures = 128\nclasses = 32\n[model]\nlayers = 3\nhidden = 128\ndropout = 0.0\n"
	if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := perfmodelCmd("predict", "-config", path, "-ranks", "1", "-json", "-mem-per-rank", "1GiB")
	var doc struct {
		Graph struct {
			N   int
			NNZ int64
		} `json:"graph"`
		Capacity capacity `json:"capacity"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	c := doc.Capacity
	if !(c.MemBF16 < c.MemFloat32) || !(c.BF16 > c.Float32) || c.Float32 <= 1 || c.Limit != 1<<30 {
		t.Fatalf("capacity %+v: want bf16 below float32 in memory and above it in graph size, both above 1", c)
	}
	for _, k := range []struct {
		prec  string
		scale float64
	}{{"float32", c.Float32}, {"bf16", c.BF16}} {
		p := filepath.Join(dir, k.prec+".toml")
		if err := os.WriteFile(p, []byte(job+"[train]\nprecision = \""+k.prec+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, s := range []float64{k.scale, k.scale * 1.01} {
			n, nnz := fmt.Sprint(int(float64(doc.Graph.N)*s)), fmt.Sprint(int64(float64(doc.Graph.NNZ)*s))
			code, _, errs := perfmodelCmd("predict", "-config", p, "-ranks", "1", "-mem-per-rank", "1GiB", "-n", n, "-nnz", nnz)
			if fits := code == 0; fits != (s == k.scale) {
				t.Errorf("%s at %.4gx the graph: fits %v (%s)", k.prec, s, fits, strings.TrimSpace(errs))
			}
		}
	}
	code, text, _ := perfmodelCmd("predict", "-config", path, "-ranks", "1")
	if code != 0 || !strings.Contains(text, "memory per rank on it: float32 ") || strings.Contains(text, "fits a graph up to") {
		t.Errorf("without a limit:\n%s", text)
	}
}
