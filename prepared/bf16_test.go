package prepared

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scalegnn/dataset"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/npy"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// roundedGraph is g with every feature rounded to bfloat16 and widened
// back (spmm.RoundBF16).
func roundedGraph(g *dataset.Graph) *dataset.Graph {
	c := cloneGraph(g)
	for i, x := range c.Features {
		c.Features[i] = spmm.RoundBF16(x)
	}
	return c
}

// TestBF16Features prepares graphs with float32 and bfloat16 features and
// requires the bfloat16 dataset to read back exactly what a float32
// dataset of the rounded features reads, through FeatureBlock and
// FeatureBlockInto (the shards) on ranges that cut the stored blocks, with
// and without row normalisation; its unnormalised features are
// spmm.RoundBF16 of the float32 dataset's, bit for bit. Everything but
// the features is the same file, and the feature files hold half the
// bytes.
func TestBF16Features(t *testing.T) {
	graphs := smallGraphs(t)
	for _, c := range []struct {
		graph  string
		scheme permute.Scheme
		blocks int
	}{
		{"cora", permute.Double, 3},
		{"sbm", permute.Single, 5},
		{"rmat", permute.None, 1},
	} {
		t.Run(fmt.Sprintf("%s/%v/S%d", c.graph, c.scheme, c.blocks), func(t *testing.T) {
			g := graphs[c.graph]
			tmp := t.TempDir()
			prep := func(name string, g *dataset.Graph, dt string) string {
				dir := filepath.Join(tmp, name)
				m, err := Prepare(&GraphInput{G: g, Format: "test"}, dir, Options{Blocks: c.blocks, Scheme: c.scheme, Seed: 7, FeatureDType: dt})
				if err != nil {
					t.Fatal(err)
				}
				if want := map[string]int{"": 4, FeaturesFloat32: 4, FeaturesBF16: 2}[dt]; m.FeatureBytes() != want {
					t.Fatalf("%s: FeatureBytes %d, want %d", name, m.FeatureBytes(), want)
				}
				return dir
			}
			f32 := prep("f32", g, FeaturesFloat32)
			h16 := prep("bf16", g, FeaturesBF16)
			rnd := prep("rounded", roundedGraph(g), "")
			checkSameFiles(t, f32, h16)

			for _, norm := range []bool{false, true} {
				open := func(dir string) *Dataset {
					d, err := Open(dir, LoadOptions{NormalizeFeatures: norm})
					if err != nil {
						t.Fatal(err)
					}
					return d
				}
				df, dh, dr := open(f32), open(h16), open(rnd)
				n, f := dh.Meta.Nodes, dh.Meta.Features
				rng := rand.New(rand.NewPCG(5, uint64(n)))
				span := func(n int) (int, int) {
					a, b := rng.IntN(n+1), rng.IntN(n+1)
					return min(a, b), max(a, b)
				}
				ranges := [][4]int{{0, n, 0, f}, {0, 1, 0, f}, {n - 1, n, 0, f}}
				for range 8 {
					r0, r1 := span(n)
					c0, c1 := span(f)
					ranges = append(ranges, [4]int{r0, r1, c0, c1}, [4]int{r0, r1, 0, f})
				}
				for _, r := range ranges {
					got := make([]float32, (r[1]-r[0])*(r[3]-r[2]))
					if err := dh.FeatureBlockInto(got, 1, r[0], r[1], r[2], r[3]); err != nil {
						t.Fatal(err)
					}
					want, err := dr.FeatureBlock(1, r[0], r[1], r[2], r[3])
					if err != nil {
						t.Fatal(err)
					}
					if !sameBlock(want, got) {
						t.Fatalf("normalise %v, rows [%d, %d), columns [%d, %d): bf16 dataset differs from the rounded float32 one", norm, r[0], r[1], r[2], r[3])
					}
					if norm {
						continue
					}
					raw, err := df.FeatureBlock(1, r[0], r[1], r[2], r[3])
					if err != nil {
						t.Fatal(err)
					}
					for i, x := range raw {
						if math.Float32bits(spmm.RoundBF16(x)) != math.Float32bits(got[i]) {
							t.Fatalf("rows [%d, %d), columns [%d, %d), element %d: %v, want RoundBF16(%v) = %v", r[0], r[1], r[2], r[3], i, got[i], x, spmm.RoundBF16(x))
						}
					}
				}
				// The 3D shards (FeatureBlockInto on each rank's ranges)
				// equal those of the rounded graph in memory.
				cfg := gcn.Config{Hidden: 4, Layers: 2, Features: g.F, Classes: g.Classes}
				shape := grid.Shape{D: 1, X: 2, Y: 2, Z: 2}
				want := shardsOf(t, shape, cfg, func() gcn.Source { return memorySource(t, roundedGraph(g), c.scheme, 7, norm) })
				got := shardsOf(t, shape, cfg, func() gcn.Source { return open(h16) })
				compareShards(t, want, got, cfg.Layers)
			}
		})
	}
}

// checkSameFiles requires the float32 and bf16 datasets to differ only in
// their features: every other file the same (same SHA-256), each feature
// file half the data of its float32 twin with a header of the same size,
// and meta.toml naming the dtype only for bf16.
func checkSameFiles(t *testing.T, f32, h16 string) {
	t.Helper()
	mf, err := ReadMeta(f32)
	if err != nil {
		t.Fatal(err)
	}
	mh, err := ReadMeta(h16)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]FileMeta{}
	for _, fm := range mh.Files {
		byPath[fm.Path] = fm
	}
	var featF, featH int64
	for _, a := range mf.Files {
		b := byPath[a.Path]
		if !strings.HasPrefix(a.Path, "features/") {
			if a != b {
				t.Errorf("%s: %+v in the float32 dataset, %+v in the bf16 one", a.Path, a, b)
			}
			continue
		}
		hf, err := npy.Open(filepath.Join(f32, a.Path))
		if err != nil {
			t.Fatal(err)
		}
		hh, err := npy.Open(filepath.Join(h16, a.Path))
		if err != nil {
			t.Fatal(err)
		}
		hf.Close()
		hh.Close()
		if hf.Descr != npy.Float32 || hh.Descr != npy.Uint16 || hf.DataOffset != hh.DataOffset || 2*(b.Bytes-hh.DataOffset) != a.Bytes-hf.DataOffset {
			t.Errorf("%s: %s of %d bytes (data at %d) and %s of %d bytes (data at %d): expected <f4 and <u2, half the data", a.Path, hf.Descr, a.Bytes, hf.DataOffset, hh.Descr, b.Bytes, hh.DataOffset)
		}
		featF += a.Bytes - hf.DataOffset
		featH += b.Bytes - hh.DataOffset
	}
	if featF != 2*featH || featF != 4*int64(mf.Nodes)*int64(mf.Features) {
		t.Errorf("feature data: %d bytes float32, %d bf16, for %d×%d features", featF, featH, mf.Nodes, mf.Features)
	}
	tf, _ := os.ReadFile(filepath.Join(f32, MetaFile))
	th, _ := os.ReadFile(filepath.Join(h16, MetaFile))
	if strings.Contains(string(tf), "feature_dtype") || !strings.Contains(string(th), `feature_dtype = "bf16"`) {
		t.Errorf("meta.toml: the float32 dataset's should not name feature_dtype, the bf16 one's should:\n%s\n%s", tf, th)
	}
}

// bf16Fixture prepares the numpy fixture with bfloat16 features.
func bf16Fixture(t *testing.T) string {
	t.Helper()
	return prepareFixtureWith(t, Options{Blocks: 2, Scheme: permute.Single, Seed: 1, Symmetrize: true, FeatureDType: FeaturesBF16})
}

// pokeUint16 writes h over element k of the uint16 array in dataset file
// rel and rewrites its digest in meta.toml (as pokeFloat32).
func pokeUint16(t *testing.T, dir, rel string, k int, h uint16) {
	t.Helper()
	pokeElem(t, dir, rel, 2*int64(k), func(b []byte) { binary.LittleEndian.PutUint16(b, h) })
}

// editMeta replaces the first old in dir's meta.toml with new.
func editMeta(t *testing.T, dir, old, new string) {
	t.Helper()
	mp := filepath.Join(dir, MetaFile)
	meta, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(meta), old, new, 1)
	if edited == string(meta) {
		t.Fatalf("%q not found in %s", old, MetaFile)
	}
	if err := os.WriteFile(mp, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBF16Refused: a damaged bfloat16 feature file, a NaN or infinity
// stored in one, a feature file of the other dtype and an unknown
// feature_dtype are each refused with a line naming the file or the key;
// feature_dtype = "float32" written out is read as its absence.
func TestBF16Refused(t *testing.T) {
	readFeatures := func(dir string) error {
		d, err := Open(dir, LoadOptions{NormalizeFeatures: true})
		if err != nil {
			return err
		}
		_, err = d.FeatureBlock(1, 0, d.Meta.Nodes, 0, d.Meta.Features)
		return err
	}
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   []string
	}{
		{"flipped byte", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "features/r1.npy")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)-1] ^= 0x01
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"features/r1.npy", "SHA-256 mismatch"}},
		{"truncated", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "features/r0.npy")
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, st.Size()-2); err != nil {
				t.Fatal(err)
			}
		}, []string{"features/r0.npy", "truncated"}},
		{"NaN", func(t *testing.T, dir string) { pokeUint16(t, dir, "features/r1.npy", 4, 0x7fc0) },
			[]string{"features/r1.npy: row 1, column 1", "is NaN"}},
		{"infinity", func(t *testing.T, dir string) { pokeUint16(t, dir, "features/r0.npy", 0, 0xff80) },
			[]string{"features/r0.npy: row 0, column 0", "is -Inf"}},
		{"float32 file", func(t *testing.T, dir string) {
			editMeta(t, dir, `feature_dtype = "bf16"`, `feature_dtype = "float32"`)
		}, []string{"features/r0.npy: dtype <u2", "expected dtype <f4"}},
		{"unknown dtype", func(t *testing.T, dir string) {
			editMeta(t, dir, `feature_dtype = "bf16"`, `feature_dtype = "fp8"`)
		}, []string{"meta.toml: feature_dtype = \"fp8\": expected \"float32\" or \"bf16\""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := bf16Fixture(t)
			if err := readFeatures(dir); err != nil {
				t.Fatalf("undamaged: %v", err)
			}
			c.damage(t, dir)
			err := readFeatures(dir)
			if err == nil {
				t.Fatal("damaged dataset read without error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of several lines: %q", err)
			}
		})
	}
	// feature_dtype = "float32", written out, is a float32 dataset.
	dir := prepareFixtureWith(t, Options{Blocks: 2, Scheme: permute.Single, Seed: 1, Symmetrize: true})
	editMeta(t, dir, "features = ", "feature_dtype = \"float32\"\nfeatures = ")
	if err := readFeatures(dir); err != nil {
		t.Errorf("feature_dtype = \"float32\": %v", err)
	}
	in, err := NewEdgeListInput(fixture())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(in, filepath.Join(t.TempDir(), "x"), Options{Blocks: 2, FeatureDType: "fp16"}); err == nil || !strings.Contains(err.Error(), `"fp16"`) {
		t.Errorf("Prepare with feature dtype fp16: %v", err)
	}
}
