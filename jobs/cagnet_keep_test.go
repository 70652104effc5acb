package jobs

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"

	"scalegnn/checkpoint"
	"scalegnn/collectives"
	"scalegnn/dataset"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/method"
	"scalegnn/npy"
	"scalegnn/permute"
	"scalegnn/prepared"
	"scalegnn/record"
)

// keepGrid is where a job of these tests runs: 1.5D with p ranks and
// replication c, or 3D on an x·y·z grid (c = 0).
type keepGrid struct{ p, c, x, y, z int }

func (g keepGrid) String() string {
	if g.c > 0 {
		return fmt.Sprintf("1.5d %dx%d", g.p/g.c, g.c)
	}
	return fmt.Sprintf("3d %dx%dx%d", g.x, g.y, g.z)
}

// keepConfig is a 6-epoch Cora job (dropout 0.5, Adam, evaluation every
// epoch) on grid g writing into dir.
func keepConfig(g keepGrid, dir string) jobfile.Config {
	cfg := jobfile.DefaultConfig()
	cfg.Train.Epochs, cfg.Train.EvalEvery, cfg.Train.Seed = 6, 1, 3
	cfg.Permute = jobfile.PermuteConfig{Scheme: permute.Single, Seed: 5}
	if g.c > 0 {
		cfg.Train.Algorithm = method.CAGNET
		cfg.Grid = jobfile.GridConfig{X: g.p, Y: 1, Z: 1, D: 1, Replication: g.c}
	} else {
		cfg.Grid = jobfile.GridConfig{X: g.x, Y: g.y, Z: g.z, D: 1}
	}
	cfg.Output.Dir = dir
	return cfg
}

// runKeep sets cfg up on in-process ranks, resumes it from the
// checkpoint resume (when not ""), and trains it; interruptAt > 0 makes
// rank 1's Interrupt report SIGTERM at its interruptAt-th call. It
// returns the metrics the run wrote and rank 0's Train error.
func runKeep(t *testing.T, cfg jobfile.Config, resume string, interruptAt int) ([]record.EpochMetrics, error) {
	t.Helper()
	var trainErr error
	for r, err := range collectives.RunLocal(cfg.Grid.Ranks(), func(w collectives.Comm) error {
		c := cfg
		j, err := Setup(&c, w, device.NewNative(1), zap.NewNop())
		if err != nil {
			return err
		}
		if resume != "" {
			if _, err := j.LoadCheckpoint(resume); err != nil {
				return err
			}
			if err := j.OpenOutput(OutputOptions{Resume: true}); err != nil {
				return err
			}
		}
		if interruptAt > 0 {
			calls := 0
			j.Interrupt = func() string {
				if calls++; w.Rank() == 1 && calls == interruptAt {
					return "SIGTERM"
				}
				return ""
			}
		}
		_, err = j.Train()
		if w.Rank() == 0 {
			trainErr = err
		}
		var ie *InterruptedError
		if errors.As(err, &ie) {
			return nil // every rank stops: checked on rank 0's
		}
		return err
	}) {
		if err != nil {
			t.Fatalf("%s rank %d: %v", cfg.Output.Dir, r, err)
		}
	}
	ms, err := record.ReadMetrics(cfg.MetricsPath())
	if err != nil {
		t.Fatal(err)
	}
	return ms, trainErr
}

// savedModel is the checkpoint output.save_model wrote into dir.
func savedModel(t *testing.T, dir string) string {
	t.Helper()
	ckpt, _, err := checkpoint.Latest(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ckpt
}

// modelWeights reads the weights of the model saved in dir, by name.
func modelWeights(t *testing.T, dir string) map[string][]float32 {
	t.Helper()
	dir = savedModel(t, dir)
	man, err := checkpoint.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float32{}
	for _, p := range man.Params {
		f, err := npy.Open(filepath.Join(dir, p.Name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		x, err := f.ReadAllFloat32()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[p.Name] = x
	}
	return out
}

// sameEpochs compares the resumed run's metrics got with the
// uninterrupted run's want from epoch `from` on: losses and accuracies
// bit for bit when tol = 0, else within tol (relative for the loss).
func sameEpochs(t *testing.T, what string, got, want []record.EpochMetrics, from int, tol float64) {
	t.Helper()
	epochsWithin(t, what, got, want, from, tol, tol)
}

// epochsWithin is sameEpochs with a relative tolerance on the loss and an
// absolute one on the accuracies: bit for bit where both are 0.
func epochsWithin(t *testing.T, what string, got, want []record.EpochMetrics, from int, lossTol, accTol float64) {
	t.Helper()
	if len(got) != len(want)-from+1 || got[0].Epoch != from {
		t.Fatalf("%s: resumed run wrote %d epochs from %d, want epochs %d to %d", what, len(got), got[0].Epoch, from, len(want))
	}
	acc := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	for _, g := range got {
		w := want[g.Epoch-1]
		ok := math.Abs(g.Loss-w.Loss) <= lossTol*math.Abs(w.Loss)
		for _, a := range [][2]*float64{{g.TrainAcc, w.TrainAcc}, {g.ValAcc, w.ValAcc}, {g.TestAcc, w.TestAcc}} {
			ok = ok && math.Abs(acc(a[0])-acc(a[1])) <= accTol
		}
		if !ok {
			t.Errorf("%s epoch %d: resumed loss %.17g val %v test %v; uninterrupted loss %.17g val %v test %v (tolerances %g, %g)",
				what, g.Epoch, g.Loss, acc(g.ValAcc), acc(g.TestAcc), w.Loss, acc(w.ValAcc), acc(w.TestAcc), lossTol, accTol)
		}
	}
}

// sameWeights compares two saved models' weights: bit for bit when
// tol = 0, else |got − want| ≤ tol·(1+|want|).
func sameWeights(t *testing.T, what string, got, want map[string][]float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d parameters saved, want %d", what, len(got), len(want))
	}
	for name, w := range want {
		g := got[name]
		if len(g) != len(w) {
			t.Fatalf("%s: %s has %d entries, want %d", what, name, len(g), len(w))
		}
		for k := range w {
			if d := math.Abs(float64(g[k] - w[k])); d > tol*(1+math.Abs(float64(w[k]))) || (tol == 0 && g[k] != w[k]) {
				t.Errorf("%s: final %s entry %d = %v, uninterrupted %v (tolerance %g)", what, name, k, g[k], w[k], tol)
				break
			}
		}
	}
}

// TestCAGNETResume: a 1.5D run checkpointed after epoch 3 of 6 and
// resumed trains epochs 4 to 6 like the run that went on: bit for bit
// (losses, accuracies, final weights) on the same (P, c); within 1e-5 on
// another (P, c) and in 3D, and from a 3D checkpoint in 1.5D (the
// checkpoint is grid-free). The uninterrupted runs write their
// checkpoint by [checkpoint] every = 3 and their final model by
// output.save_model.
func TestCAGNETResume(t *testing.T) {
	const tol = 1e-5
	tmp := t.TempDir()
	// The uninterrupted runs, one per grid resumed from.
	type run struct {
		cfg  jobfile.Config
		want []record.EpochMetrics
	}
	runs := map[keepGrid]run{}
	for _, c := range []struct {
		from, to keepGrid
		tol      float64
	}{
		{keepGrid{p: 8, c: 2}, keepGrid{p: 8, c: 2}, 0},
		{keepGrid{p: 8, c: 2}, keepGrid{p: 6, c: 3}, tol},
		{keepGrid{p: 8, c: 2}, keepGrid{x: 1, y: 2, z: 2}, tol},
		{keepGrid{x: 2, y: 1, z: 1}, keepGrid{p: 6, c: 3}, tol},
	} {
		if c.tol > 0 && testing.Short() {
			continue // another grid: the exact case runs in -short too
		}
		what := fmt.Sprintf("%v -> %v", c.from, c.to)
		name := strings.NewReplacer(" ", "", ">", "").Replace(what)
		r, ok := runs[c.from]
		if !ok {
			r.cfg = keepConfig(c.from, filepath.Join(tmp, name, "full"))
			r.cfg.Checkpoint, r.cfg.Output.SaveModel = jobfile.CheckpointConfig{Every: 3}, true
			r.want, _ = runKeep(t, r.cfg, "", 0)
			runs[c.from] = r
		}
		full, want := r.cfg, r.want
		ckpt := filepath.Join(full.CheckpointDir(), checkpoint.Name(3))
		resumed := keepConfig(c.to, filepath.Join(tmp, name, "resumed"))
		resumed.Output.SaveModel = true
		got, _ := runKeep(t, resumed, ckpt, 0)
		sameEpochs(t, what, got, want, 4, c.tol)
		sameWeights(t, what, modelWeights(t, resumed.ModelDir()), modelWeights(t, full.ModelDir()), c.tol)
		if c.from.c > 0 {
			man, err := checkpoint.ReadManifest(ckpt)
			if err != nil || man.Grid != c.from.String() || man.OptimizerStep != 3 || man.Epoch != 3 {
				t.Errorf("%s: manifest %+v, %v; want grid %q, 3 optimizer steps, epoch 3", what, man, err, c.from.String())
			}
		}
	}
}

// TestCAGNETSignalResume: a SIGTERM reaching rank 1 of a 1.5D run at its
// third step stops every rank there with a checkpoint (the epoch's step
// taken, its evaluation not yet), and resuming from it gives the
// uninterrupted run's epochs 3 to 6 bit for bit.
func TestCAGNETSignalResume(t *testing.T) {
	tmp := t.TempDir()
	g := keepGrid{p: 4, c: 2}
	want, _ := runKeep(t, keepConfig(g, filepath.Join(tmp, "full")), "", 0)
	stopped := keepConfig(g, filepath.Join(tmp, "stopped"))
	stopped.Checkpoint = jobfile.CheckpointConfig{Every: 100}
	ms, err := runKeep(t, stopped, "", 3)
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Checkpoint == "" || ie.Epoch != 3 || ie.Step != 3 || len(ms) != 2 {
		t.Fatalf("interrupted run: error %v, %d epochs of metrics; want an InterruptedError at epoch 3, step 3 with a checkpoint, and 2 epochs", err, len(ms))
	}
	got, _ := runKeep(t, keepConfig(g, filepath.Join(tmp, "resumed")), ie.Checkpoint, 0)
	sameEpochs(t, "SIGTERM at step 3", got, want, 3, 0)
}

// TestCAGNETPreparedLikeInMemory: a 1.5D job (6 ranks, c = 3, single
// permutation) trains on a prepared Cora (4×4 stored blocks, which no
// block row matches) exactly as on Cora in memory, GCN and SAGE.
func TestCAGNETPreparedLikeInMemory(t *testing.T) {
	tmp := t.TempDir()
	g, err := dataset.Builtin("cora")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "cora-prepared")
	if _, err := prepared.Prepare(&prepared.GraphInput{G: g}, dir, prepared.Options{Blocks: 4, Scheme: permute.Single, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer} {
		cfg := keepConfig(keepGrid{p: 6, c: 3}, filepath.Join(tmp, layer.String(), "mem"))
		cfg.Train.Epochs, cfg.Model.Layer = 2, layer
		want, _ := runKeep(t, cfg, "", 0)
		cfg.Dataset.Source, cfg.Dataset.Path = jobfile.SourcePrepared, dir
		cfg.Output.Dir = filepath.Join(tmp, layer.String(), "prepared")
		got, _ := runKeep(t, cfg, "", 0)
		sameEpochs(t, layer.String()+" prepared", got, want, 1, 0)
	}
}

// TestCAGNETPredict: the model a 1.5D run saves (output.save_model)
// predicts on 1.5D ranks what its run measured: the argmax of the
// probabilities over the test split gives the run's final test accuracy
// exactly, the rows sum to 1 and are in original vertex order (the
// same, within 1e-5, as the 3D model's predictions from that
// checkpoint), and layer 0's embeddings are N × hidden.
func TestCAGNETPredict(t *testing.T) {
	tmp := t.TempDir()
	cfg := keepConfig(keepGrid{p: 6, c: 3}, filepath.Join(tmp, "run"))
	cfg.Output.SaveModel = true
	ms, _ := runKeep(t, cfg, "", 0)
	graph, err := jobfile.LoadGraph(cfg.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	model := savedModel(t, cfg.ModelDir())
	predict := func(cfg jobfile.Config, emb int) (rows [][]float32, width int) {
		rows = make([][]float32, graph.N)
		var mu sync.Mutex
		for r, err := range collectives.RunLocal(cfg.Grid.Ranks(), func(w collectives.Comm) error {
			c := cfg
			j, err := Setup(&c, w, device.NewNative(1), zap.NewNop())
			if err != nil {
				return err
			}
			if _, err := j.LoadCheckpoint(model); err != nil {
				return err
			}
			var b gcn.Block
			if emb >= 0 {
				b, err = j.Embeddings(emb)
			} else {
				b, err = j.Probabilities()
			}
			if err != nil || !b.Owner {
				return err
			}
			if j.Vertices() != graph.N {
				return fmt.Errorf("Vertices() = %d, want %d", j.Vertices(), graph.N)
			}
			bw := b.C1 - b.C0
			mu.Lock() // ranks are goroutines
			defer mu.Unlock()
			for i, v := range b.Vertices {
				if rows[v] == nil {
					rows[v] = make([]float32, b.Cols)
				}
				copy(rows[v][b.C0:b.C1], b.Data[i*bw:(i+1)*bw])
			}
			return nil
		}) {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
		return rows, len(rows[0])
	}
	probs, classes := predict(cfg, -1)
	hits, n := 0, 0
	for v, row := range probs {
		best, sum := 0, 0.0
		for k, x := range row {
			sum += float64(x)
			if x > row[best] {
				best = k
			}
		}
		if math.Abs(sum-1) > 1e-5 || classes != graph.Classes {
			t.Fatalf("vertex %d: %d probabilities summing to %v", v, len(row), sum)
		}
		if graph.Test[v] {
			n++
			if int32(best) == graph.Labels[v] {
				hits++
			}
		}
	}
	if got, want := float64(hits)/float64(n), *ms[len(ms)-1].TestAcc; got != want {
		t.Errorf("argmax of the 1.5D predictions over the test split: accuracy %v, the run's %v", got, want)
	}
	as3D := keepConfig(keepGrid{x: 1, y: 2, z: 2}, cfg.Output.Dir)
	p3, _ := predict(as3D, -1)
	for v := range probs {
		for k := range probs[v] {
			if d := math.Abs(float64(probs[v][k] - p3[v][k])); d > 1e-5 {
				t.Fatalf("vertex %d class %d: 1.5D probability %v, 3D %v from the same checkpoint", v, k, probs[v][k], p3[v][k])
			}
		}
	}
	if _, w := predict(cfg, 0); w != cfg.Model.Hidden {
		t.Errorf("layer 0 embeddings of width %d, want %d", w, cfg.Model.Hidden)
	}
}

// TestCAGNETSaveModelFiles: save_model writes the same checkpoint layout
// as 3D (a manifest and float32 .npy files numpy reads), so predict and
// -resume read it on any grid.
func TestCAGNETSaveModelFiles(t *testing.T) {
	tmp := t.TempDir()
	cfg := keepConfig(keepGrid{p: 2, c: 2}, filepath.Join(tmp, "run"))
	cfg.Train.Epochs, cfg.Output.SaveModel = 2, true
	runKeep(t, cfg, "", 0)
	model := savedModel(t, cfg.ModelDir())
	man, err := checkpoint.Verify(model)
	if err != nil {
		t.Fatal(err)
	}
	if man.Step != 2 || man.OptimizerStep != 2 || len(man.Params) != 2 || man.Params[0].Name != "gcn0.weight" {
		t.Errorf("manifest: step %d, optimizer step %d, params %+v; want 2, 2 and gcn0.weight, gcn1.weight", man.Step, man.OptimizerStep, man.Params)
	}
	data, err := os.ReadFile(filepath.Join(model, "gcn0.weight.npy"))
	if err != nil || !bytes.HasPrefix(data, []byte("\x93NUMPY")) {
		t.Errorf("gcn0.weight.npy: %v; want a .npy file", err)
	}
}

// TestCAGNETFingerprintIs3D: a 1.5D job's dataset fingerprint (which a
// resume checks) is the 3D job's on the same dataset, for GCN and SAGE
// (whose nonzeros are D^-1 A's), so checkpoints move between them, and
// in bf16 too; a different permutation seed changes it.
func TestCAGNETFingerprintIs3D(t *testing.T) {
	fingerprint := func(cfg jobfile.Config) checkpoint.Dataset {
		var out checkpoint.Dataset
		for r, err := range collectives.RunLocal(cfg.Grid.Ranks(), func(w collectives.Comm) error {
			c := cfg
			j, err := Setup(&c, w, device.NewNative(1), zap.NewNop())
			if err != nil {
				return err
			}
			f, err := j.fingerprint()
			if w.Rank() == 0 {
				out = f
			}
			return err
		}) {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
		return out
	}
	tmp := t.TempDir()
	for _, layer := range []gcn.Layer{gcn.GCNLayer, gcn.SAGELayer} {
		var got [3]checkpoint.Dataset
		for i, g := range []keepGrid{{p: 6, c: 3}, {x: 1, y: 2, z: 2}, {p: 4, c: 1}} {
			cfg := keepConfig(g, filepath.Join(tmp, "unused"))
			cfg.Model.Layer = layer
			if i == 2 {
				cfg.Permute.Seed = 6
			}
			got[i] = fingerprint(cfg)
		}
		if got[0] != got[1] {
			t.Errorf("%v: 1.5D fingerprint %+v, 3D %+v", layer, got[0], got[1])
		}
		if got[2] == got[0] {
			t.Errorf("%v: permutation seeds 5 and 6 give the same fingerprint %+v", layer, got[0])
		}
		// In bf16 the features are held in bfloat16 (cagnet's
		// FeaturesInBF16), hashed as float32 when read.
		cfg := keepConfig(keepGrid{p: 6, c: 3}, filepath.Join(tmp, "unused"))
		cfg.Model.Layer, cfg.Train.Precision = layer, device.BF16
		if b := fingerprint(cfg); b != got[0] {
			t.Errorf("%v: 1.5D fingerprint in bf16 %+v, in float32 %+v", layer, b, got[0])
		}
	}
}
