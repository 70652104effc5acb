package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// perfmodelCmd runs scalegnn perfmodel in-process (predict and score need
// no MPI) and returns the exit code, stdout and stderr.
func perfmodelCmd(args ...string) (int, string, string) {
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
