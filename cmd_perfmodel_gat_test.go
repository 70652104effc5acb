package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gatPrediction is what TestPerfmodelPredictGAT reads of one grid.
type gatPrediction struct {
	Algorithm string  `json:"algorithm"`
	Grid      string  `json:"grid"`
	Epoch     float64 `json:"epoch_s"`
	Memory    struct {
		Attention int64 `json:"attention"`
	} `json:"memory"`
}

// predictJSON writes the R-MAT example with model lines replaced by
// model and runs perfmodel predict -json on 8 ranks; skip names the
// stderr text that means the job file does not take the lines yet.
func predictJSON(t *testing.T, model, skip string) []gatPrediction {
	t.Helper()
	body, err := os.ReadFile("examples/rmat.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(body), "hidden = 128\n", model, 1)
	path := filepath.Join(t.TempDir(), "job.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := perfmodelCmd("predict", "-config", path, "-ranks", "8", "-top", "0", "-json")
	if code != 0 && skip != "" && strings.Contains(errs, skip) {
		t.Skipf("the job file does not take %q yet: %s", model, strings.TrimSpace(errs))
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Predictions []gatPrediction `json:"predictions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	return doc.Predictions
}

// TestPerfmodelPredictGAT: perfmodel predict ranks the grids of a GAT job
// (the R-MAT example with layer = "gat"): every grid's prediction holds
// the per-edge arrays and costs more than the GCN job's of the same
// width on the same grid.
func TestPerfmodelPredictGAT(t *testing.T) {
	gcnPreds := predictJSON(t, "hidden = 128\n", "")
	gatPreds := predictJSON(t, "hidden = 128\nlayer = \"gat\"\n", "")
	gcnEpoch := map[string]float64{}
	for _, p := range gcnPreds {
		gcnEpoch[p.Algorithm+" "+p.Grid] = p.Epoch
	}
	if len(gatPreds) < 10 {
		t.Fatalf("%d predictions, expected the ten 3D grids of 8 ranks at least", len(gatPreds))
	}
	for i, p := range gatPreds {
		if i > 0 && p.Epoch < gatPreds[i-1].Epoch {
			t.Errorf("%s (%.3g s) ranked after %s (%.3g s)", p.Grid, p.Epoch, gatPreds[i-1].Grid, gatPreds[i-1].Epoch)
		}
		g, ok := gcnEpoch[p.Algorithm+" "+p.Grid]
		if p.Memory.Attention <= 0 || ok && !(p.Epoch > g) {
			t.Errorf("%s %s: attention %d bytes, epoch %.3g s (GCN %.3g s)", p.Algorithm, p.Grid, p.Memory.Attention, p.Epoch, g)
		}
	}
}

// TestPerfmodelPredictGATHeads: model.heads reaches the model — two
// hidden layers of four heads of 32 hold four times the per-edge arrays
// of one head of 128 (the last layer has one head in both), so the total
// grows between once and four times, exactly three times on 2x2x2 where
// every layer's shard block is the same size. It skips until the job
// file takes model.heads.
func TestPerfmodelPredictGATHeads(t *testing.T) {
	one := predictJSON(t, "hidden = 128\nlayer = \"gat\"\n", "")
	four := predictJSON(t, "hidden = 32\nlayer = \"gat\"\nheads = 4\n", "unknown key model.heads")
	att := map[string]int64{}
	for _, p := range one {
		att[p.Algorithm+" "+p.Grid] = p.Memory.Attention
	}
	for _, p := range four {
		a1 := att[p.Algorithm+" "+p.Grid]
		r := float64(p.Memory.Attention) / float64(a1)
		if !(r > 1 && r < 4) || p.Grid == "2x2x2" && (r < 2.999 || r > 3.001) {
			t.Errorf("%s %s: %d bytes of per-edge arrays with 4 heads, %d with 1: ratio %.4f", p.Algorithm, p.Grid, p.Memory.Attention, a1, r)
		}
	}
}
