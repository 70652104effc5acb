package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/npy"
)

var testJob = []byte("[dataset]\nsource = \"random\"\n")

// save trains the test model steps full-graph steps on shape, saves it in
// root as the checkpoint of that step, keeping keep, and returns its
// directory and the model's tensors as the ranks held them.
func save(t *testing.T, shape grid.Shape, root string, keep, steps int) (string, *tensors) {
	t.Helper()
	var (
		ts  tensors
		mu  = make(chan string, shape.Ranks())
		dir string
	)
	err := runOn(shape, func(world collectives.Comm) error {
		m, err := build(world, shape, testConfig, testGraph, gcn.Options{})
		if err != nil {
			return err
		}
		for s := range steps {
			if _, err := m.TrainStep(s); err != nil {
				return err
			}
		}
		fp, err := m.Fingerprint()
		if err != nil {
			return err
		}
		man := Manifest{Step: steps, Epoch: steps, OptimizerStep: m.OptimizerSteps(), Grid: shape.String(),
			Dataset: DatasetOf(fp, "double", permSeed), Model: ModelOf(testConfig)}
		d, err := Save(world, root, keep, m, man, testJob)
		if err != nil {
			return err
		}
		ts.add(m)
		mu <- d
		return nil
	})
	if err != nil {
		t.Fatalf("save on %v: %v", shape, err)
	}
	for range shape.Ranks() {
		if d := <-mu; dir != "" && d != dir {
			t.Fatalf("save on %v: ranks returned %s and %s", shape, dir, d)
		} else {
			dir = d
		}
	}
	return dir, &ts
}

// load builds an untrained model on shape, loads dir into it and returns
// its tensors.
func load(shape grid.Shape, dir string) (*tensors, error) {
	var ts tensors
	err := runOn(shape, func(world collectives.Comm) error {
		m, err := build(world, shape, testConfig, testGraph, gcn.Options{})
		if err != nil {
			return err
		}
		man, err := ReadManifest(dir)
		if err != nil {
			return err
		}
		if err := Load(world, dir, m, man); err != nil {
			return err
		}
		ts.add(m)
		return nil
	})
	return &ts, err
}

// files reads every parameter file of dir as numpy would: the tensors on
// disk, global coordinates.
func files(t *testing.T, dir string) *tensors {
	t.Helper()
	man, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	ts := tensors{data: map[string][]float32{}, steps: man.OptimizerStep}
	for _, p := range man.Params {
		for _, name := range p.files() {
			f, err := npy.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			x, err := f.ReadAllFloat32()
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.Shape, []int{p.Rows, p.Cols}) {
				t.Fatalf("%s: shape %v, want [%d %d]", name, f.Shape, p.Rows, p.Cols)
			}
			ts.data[name] = x
		}
	}
	return &ts
}

// TestRoundTripAcrossGrids: a checkpoint written on any of the grids holds
// the model's tensors in global coordinates bit for bit (read back with
// package npy, as numpy would), and read on any grid it gives every rank
// the same global tensors and optimizer step count bit for bit.
func TestRoundTripAcrossGrids(t *testing.T) {
	for _, from := range grids {
		t.Run(from.String(), func(t *testing.T) {
			dir, want := save(t, from, t.TempDir(), 0, 2)
			if want.err != nil {
				t.Fatal(want.err)
			}
			if err := want.equal(files(t, dir)); err != nil {
				t.Fatalf("written on %v, the files: %v", from, err)
			}
			if want.steps != 2 {
				t.Fatalf("optimizer steps %d after 2 steps", want.steps)
			}
			for _, to := range grids {
				got, err := load(to, dir)
				if err != nil {
					t.Fatalf("read on %v: %v", to, err)
				}
				if err := want.equal(got); err != nil {
					t.Errorf("written on %v, read on %v: %v", from, to, err)
				}
			}
		})
	}
}

// copyDir copies a checkpoint directory (flat: files only).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// flipByte changes one byte of path's data (past its npy header).
func flipByte(t *testing.T, path string, at int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{0}
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x01 // the lowest mantissa bit: the smallest change there is
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyRefuses: every way a checkpoint can be damaged is refused by
// Verify and by Load with one line naming the file and the fault, and
// the undamaged copy verifies.
func TestVerifyRefuses(t *testing.T) {
	good, _ := save(t, one, t.TempDir(), 0, 1)
	if _, err := Verify(good); err != nil {
		t.Fatalf("an undamaged checkpoint: %v", err)
	}
	header := int64(len(npy.HeaderBytes(npy.Float32, 1, 1)))
	cases := []struct {
		name, file, want string
		damage           func(t *testing.T, dir string)
	}{
		{"flipped weight byte", "gcn1.weight.npy", "corrupt file",
			func(t *testing.T, d string) { flipByte(t, filepath.Join(d, "gcn1.weight.npy"), header+5) }},
		{"flipped moment byte", "gcn0.norm.v.npy", "corrupt file",
			func(t *testing.T, d string) { flipByte(t, filepath.Join(d, "gcn0.norm.v.npy"), header) }},
		{"flipped config byte", ConfigFile, "corrupt file",
			func(t *testing.T, d string) { flipByte(t, filepath.Join(d, ConfigFile), 3) }},
		{"missing file", "gcn0.weight.m.npy", "missing (listed in its manifest)",
			func(t *testing.T, d string) { os.Remove(filepath.Join(d, "gcn0.weight.m.npy")) }},
		{"missing manifest", ManifestFile, "not a complete checkpoint",
			func(t *testing.T, d string) { os.Remove(filepath.Join(d, ManifestFile)) }},
		{"truncated manifest", ManifestFile, "unexpected end of JSON input",
			func(t *testing.T, d string) { os.Truncate(filepath.Join(d, ManifestFile), 40) }},
		{"manifest without a checksum", ManifestFile, "lists no checksum for gcn2.weight.v.npy",
			func(t *testing.T, d string) { editManifest(t, d, `"gcn2.weight.v.npy": "`, `"gcn2.weight.w.npy": "`) }},
		{"another format", ManifestFile, "format 2, expected 1",
			func(t *testing.T, d string) { editManifest(t, d, `"format": 1`, `"format": 2`) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := filepath.Join(t.TempDir(), Name(1))
			copyDir(t, good, d)
			c.damage(t, d)
			_, err := Verify(d)
			checkOneLine(t, "Verify", err, c.file, c.want)
			if c.file != ManifestFile {
				_, lerr := load(one, d)
				checkOneLine(t, "Load", lerr, c.file, c.want)
			}
		})
	}
}

func editManifest(t *testing.T, dir, old, new string) {
	t.Helper()
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("manifest has no %q", old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func checkOneLine(t *testing.T, what string, err error, file, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: no error, want one naming %s: %s", what, file, want)
	case strings.Contains(err.Error(), "\n"):
		t.Errorf("%s: error of several lines: %q", what, err)
	case !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), want):
		t.Errorf("%s: error %q, want one naming %s: %s", what, err, file, want)
	}
}

// TestLatest: Latest takes the newest checkpoint that verifies, passing
// over (and reporting) newer corrupt and incomplete ones, and never takes
// a temporary directory, even a complete one.
func TestLatest(t *testing.T) {
	root := t.TempDir()
	save(t, one, root, 0, 1)
	good, _ := save(t, one, root, 0, 2)
	src := t.TempDir()
	newer, _ := save(t, one, src, 0, 3)
	copyDir(t, newer, filepath.Join(root, Name(30)))
	flipByte(t, filepath.Join(root, Name(30), "gcn0.weight.npy"), 200)
	copyDir(t, newer, filepath.Join(root, Name(40)))
	os.Remove(filepath.Join(root, Name(40), ManifestFile))
	copyDir(t, newer, filepath.Join(root, tmpPrefix+"00000050")) // a write killed before its rename
	dir, skipped, err := Latest(root)
	if err != nil {
		t.Fatal(err)
	}
	if dir != good {
		t.Errorf("Latest = %s, want %s", dir, good)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0].Error(), Name(40)) || !strings.Contains(skipped[1].Error(), Name(30)) {
		t.Errorf("skipped %v, want %s (incomplete) then %s (corrupt)", skipped, Name(40), Name(30))
	}
	empty := t.TempDir()
	copyDir(t, newer, filepath.Join(empty, tmpPrefix+"00000003"))
	if dir, _, err := Latest(empty); err == nil || !strings.Contains(err.Error(), "no complete checkpoint in "+empty) {
		t.Errorf("Latest of a root holding only a temporary directory: %q, %v", dir, err)
	}
}

// TestKeepPrunes: keep K leaves the newest K checkpoints and removes the
// temporary directories of killed writes; keep 0 leaves all.
func TestKeepPrunes(t *testing.T) {
	for _, c := range []struct {
		keep int
		want []string
	}{
		{2, []string{Name(3), Name(4)}},
		{1, []string{Name(4)}},
		{0, []string{Name(1), Name(2), Name(3), Name(4)}},
	} {
		root := t.TempDir()
		for step := 1; step <= 4; step++ {
			if step == 3 {
				os.MkdirAll(filepath.Join(root, tmpPrefix+"00000099"), 0o755)
			}
			save(t, one, root, c.keep, step)
		}
		entries, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("keep %d: %v, want %v", c.keep, got, c.want)
		}
	}
}

// TestFingerprint: the dataset's fingerprint is the same on every grid,
// and another dataset (features, labels, a split or the graph changed)
// or another model width is refused by CheckCompatible.
func TestFingerprint(t *testing.T) {
	fingerprint := func(shape grid.Shape, g *gcn.Graph) Dataset {
		t.Helper()
		out := make(chan Dataset, shape.Ranks())
		if err := runOn(shape, func(world collectives.Comm) error {
			m, err := build(world, shape, testConfig, g, gcn.Options{})
			if err != nil {
				return err
			}
			fp, err := m.Fingerprint()
			out <- DatasetOf(fp, "double", permSeed)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		d := <-out
		for range shape.Ranks() - 1 {
			if o := <-out; o != d {
				t.Fatalf("%v: ranks disagree: %+v and %+v", shape, d, o)
			}
		}
		return d
	}
	want := fingerprint(one, testGraph)
	if want.N != 37 || want.NNZ != int64(testGraph.Adj.NNZ()) {
		t.Errorf("fingerprint n %d nnz %d, want 37 and %d", want.N, want.NNZ, testGraph.Adj.NNZ())
	}
	for _, shape := range grids[1:] {
		if got := fingerprint(shape, testGraph); got != want {
			t.Errorf("fingerprint on %v: %+v, on 1x1x1 %+v", shape, got, want)
		}
	}
	dir := "ckpt-00000001"
	man := &Manifest{Dataset: want, Model: ModelOf(testConfig)}
	if err := man.CheckCompatible(dir, want, ModelOf(testConfig)); err != nil {
		t.Errorf("the same dataset and model: %v", err)
	}
	edits := []struct {
		name string
		edit func(g *gcn.Graph)
	}{
		{"one feature", func(g *gcn.Graph) { g.Features[17] += 1 }},
		{"one label", func(g *gcn.Graph) { g.Labels[3] = (g.Labels[3] + 1) % 5 }},
		{"one split", func(g *gcn.Graph) { g.Test[4] = !g.Test[4] }},
		{"another graph", func(g *gcn.Graph) { *g = *gcn.RandomGraph(6, 37, 11, 5, 5) }},
	}
	for _, e := range edits {
		g := cloneGraph(testGraph)
		e.edit(g)
		for _, shape := range []grid.Shape{one, cube} {
			other := fingerprint(shape, g)
			err := man.CheckCompatible(dir, other, ModelOf(testConfig))
			checkOneLine(t, e.name+" on "+shape.String(), err, filepath.Join(dir, ManifestFile), "another dataset")
		}
	}
	wider := testConfig
	wider.Hidden++
	checkOneLine(t, "another width", man.CheckCompatible(dir, want, ModelOf(wider)), filepath.Join(dir, ManifestFile), "another model")
	seed := want
	seed.PermSeed++
	checkOneLine(t, "another permutation seed", man.CheckCompatible(dir, seed, ModelOf(testConfig)), filepath.Join(dir, ManifestFile), "another dataset")
}

// cloneGraph copies the parts of a graph the tests edit.
func cloneGraph(g *gcn.Graph) *gcn.Graph {
	c := *g
	c.Features = slices.Clone(g.Features)
	c.Labels = slices.Clone(g.Labels)
	c.Test = slices.Clone(g.Test)
	return &c
}
