package dataset

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuiltinCounts(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		n, f, classes, edges   int
		train, val, test       int
		unlabeled, featureless int
		firstClass             string
	}{
		{"cora", 2708, 1433, 7, 5278, 140, 500, 1000, 0, 0, "Theory"},
		{"citeseer", 3327, 3703, 6, 4552, 120, 500, 1000, 15, 15, "AI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Builtin(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Validate(); err != nil {
				t.Fatal(err)
			}
			if g.Name != tc.name || g.N != tc.n || g.F != tc.f || g.Classes != tc.classes {
				t.Errorf("got %s N=%d F=%d C=%d, want %s N=%d F=%d C=%d", g.Name, g.N, g.F, g.Classes, tc.name, tc.n, tc.f, tc.classes)
			}
			if g.NumEdges() != tc.edges || g.Adj.NNZ() != 2*tc.edges {
				t.Errorf("%d undirected edges (%d entries), want %d (%d)", g.NumEdges(), g.Adj.NNZ(), tc.edges, 2*tc.edges)
			}
			if tr, va, te := Count(g.Train), Count(g.Val), Count(g.Test); tr != tc.train || va != tc.val || te != tc.test {
				t.Errorf("split %d/%d/%d, want %d/%d/%d", tr, va, te, tc.train, tc.val, tc.test)
			}
			// Planetoid split: the first 20·C nodes train, 20 per class.
			perClass := make([]int, g.Classes)
			for i := range 20 * g.Classes {
				if !g.Train[i] {
					t.Fatalf("node %d not in train", i)
				}
				perClass[g.Labels[i]]++
			}
			for c, k := range perClass {
				if k != 20 {
					t.Errorf("class %d has %d training nodes, want 20", c, k)
				}
			}
			unlabeled, featureless := 0, 0
			for i := range g.N {
				if g.Labels[i] < 0 {
					unlabeled++
				}
				var s float32
				for _, x := range g.Features[i*g.F : (i+1)*g.F] {
					if x != 0 && x != 1 {
						t.Fatalf("node %d has feature %g, want binary", i, x)
					}
					s += x
				}
				if s == 0 {
					featureless++
				}
			}
			if unlabeled != tc.unlabeled || featureless != tc.featureless {
				t.Errorf("%d unlabeled, %d featureless; want %d, %d", unlabeled, featureless, tc.unlabeled, tc.featureless)
			}
			if len(g.ClassNames) != g.Classes || g.ClassNames[0] != tc.firstClass {
				t.Errorf("class names %v", g.ClassNames)
			}
		})
	}
}

// TestBuiltinCoraRow checks one row against the text of the source file
// (cora features.txt line 1, labels.txt line 1, edges.txt lines 1-5).
func TestBuiltinCoraRow(t *testing.T) {
	g, err := Builtin("cora")
	if err != nil {
		t.Fatal(err)
	}
	var cols []int
	for j, x := range g.Features[:g.F] {
		if x != 0 {
			cols = append(cols, j)
		}
	}
	if want := []int{19, 81, 146, 315, 774, 877, 1194, 1247, 1274}; !slices.Equal(cols, want) {
		t.Errorf("node 0 features at %v, want %v", cols, want)
	}
	if g.Labels[0] != 3 {
		t.Errorf("node 0 label %d, want 3", g.Labels[0])
	}
	nb := g.Adj.ColIdx[g.Adj.RowPtr[0]:g.Adj.RowPtr[1]]
	if want := []int32{633, 1862, 2582}; !slices.Equal(nb, want) {
		t.Errorf("node 0 neighbours %v, want %v", nb, want)
	}
}

func TestBuiltinUnknown(t *testing.T) {
	_, err := Builtin("pubmed")
	if err == nil || !strings.Contains(err.Error(), "citeseer, cora") {
		t.Fatalf("got %v, want an error listing citeseer, cora", err)
	}
	if got := BuiltinNames(); !slices.Equal(got, []string{"citeseer", "cora"}) {
		t.Errorf("BuiltinNames = %v", got)
	}
}

// TestLoadPlanetoidDirMatchesBuiltin writes the embedded Cora to disk,
// half of the files gunzipped, and loads it back.
func TestLoadPlanetoidDirMatchesBuiltin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cora")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := fs.ReadDir(builtinFS, "planetoid/cora")
	if err != nil {
		t.Fatal(err)
	}
	for k, e := range ents {
		b, err := fs.ReadFile(builtinFS, "planetoid/cora/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		name := e.Name()
		if strings.HasSuffix(name, ".gz") && k%2 == 0 {
			z, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if _, err := out.ReadFrom(z); err != nil {
				t.Fatal(err)
			}
			b, name = out.Bytes(), strings.TrimSuffix(name, ".gz")
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := LoadPlanetoidDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Builtin("cora")
	if got.Name != "cora" || got.N != want.N || got.F != want.F || got.Classes != want.Classes ||
		!slices.Equal(got.Adj.RowPtr, want.Adj.RowPtr) || !slices.Equal(got.Adj.ColIdx, want.Adj.ColIdx) ||
		!slices.Equal(got.Features, want.Features) || !slices.Equal(got.Labels, want.Labels) ||
		!slices.Equal(got.Train, want.Train) || !slices.Equal(got.Val, want.Val) || !slices.Equal(got.Test, want.Test) ||
		!slices.Equal(got.ClassNames, want.ClassNames) {
		t.Error("LoadPlanetoidDir of the written files differs from Builtin")
	}
}
