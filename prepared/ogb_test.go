package prepared

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/permute"
)

// writeOGB writes g in the OGB raw layout (each edge once, directed;
// gzipped CSV) under dir, with the split scheme "fixture".
func writeOGB(t *testing.T, dir string, g *dataset.Graph) {
	t.Helper()
	put := func(rel, text string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		z := gzip.NewWriter(f)
		z.Write([]byte(text))
		z.Close()
		f.Close()
	}
	var b strings.Builder
	for i := range g.N {
		for p := g.Adj.RowPtr[i]; p < g.Adj.RowPtr[i+1]; p++ {
			if j := int(g.Adj.ColIdx[p]); i < j {
				fmt.Fprintf(&b, "%d,%d\n", j, i)
			}
		}
	}
	put("raw/edge.csv.gz", b.String())
	put("raw/num-node-list.csv.gz", fmt.Sprintf("%d\n", g.N))
	b.Reset()
	for i := range g.N {
		for j := range g.F {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprint(&b, g.Features[i*g.F+j])
		}
		b.WriteString("\n")
	}
	put("raw/node-feat.csv.gz", b.String())
	b.Reset()
	for _, l := range g.Labels {
		if l < 0 {
			b.WriteString("nan\n")
		} else {
			fmt.Fprintf(&b, "%d.0\n", l)
		}
	}
	put("raw/node-label.csv.gz", b.String())
	for name, m := range map[string][]bool{"train": g.Train, "valid": g.Val, "test": g.Test} {
		b.Reset()
		for i, in := range m {
			if in {
				fmt.Fprintf(&b, "%d\n", i)
			}
		}
		put("split/fixture/"+name+".csv.gz", b.String())
	}
}

// TestOGB prepares a graph written in the OGB raw layout (directed edges,
// symmetrised by prepare) and checks every rank's shards.
func TestOGB(t *testing.T) {
	want := fixtureGraph()
	src := filepath.Join(t.TempDir(), "ogbn-fixture")
	writeOGB(t, src, want)
	in, err := NewOGBInput(src, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ds")
	m, err := Prepare(in, dir, Options{Blocks: 3, Scheme: permute.Double, Seed: 2, Symmetrize: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "ogbn-fixture" || m.Classes != 3 || m.NNZ != 38 || m.Source.Format != "ogb" {
		t.Fatalf("metadata %+v", m)
	}
	d, err := Open(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := gcn.Config{Features: 3, Classes: 3, Hidden: 2, Layers: 2}
	shape := grid.Shape{D: 1, X: 1, Y: 2, Z: 3}
	w := shardsOf(t, shape, cfg, func() gcn.Source { return memorySource(t, want, permute.Double, 2, false) })
	g := shardsOf(t, shape, cfg, func() gcn.Source { return d })
	compareShards(t, w, g, cfg.Layers)

	if _, err := NewOGBInput(t.TempDir(), ""); err == nil {
		t.Error("an empty directory is not an OGB dataset")
	}
}
