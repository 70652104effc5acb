package dataset

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tinyFiles is a valid 4-node Planetoid directory: a path 0-1-2-3 with a
// duplicate, a reverse and a self loop among the edge lines.
var tinyFiles = map[string]string{
	"meta.toml":       "nodes = 4\nfeatures = 3\nclasses = 2\nedges = 3\n",
	"labels.txt":      "0\t0\n1\t1\n2\t0\n3\t1\n",
	"features.txt":    "0\t0:1 2:1\n1\t1:1\n2\t0:0.5\n3\t2:1\n",
	"edges.txt":       "0\t1\n1\t0\n1\t2\n2\t3\n3\t3\n2\t3\n",
	"split_train.txt": "0\n1\n",
	"split_val.txt":   "2\n",
	"split_test.txt":  "3\n",
	"class_names.txt": "0\tA\n1\tB b\n",
}

// writeDir writes files into a fresh directory; a value of "\x00" omits
// the file, and a name ending in .gz is gzipped.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if body == "\x00" {
			continue
		}
		b := []byte(body)
		if strings.HasSuffix(name, ".gz") {
			var buf bytes.Buffer
			z := gzip.NewWriter(&buf)
			z.Write(b)
			z.Close()
			b = buf.Bytes()
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadPlanetoidDirTiny(t *testing.T) {
	for _, meta := range []bool{true, false} {
		files := maps.Clone(tinyFiles)
		if !meta {
			delete(files, "meta.toml")
		}
		g, err := LoadPlanetoidDir(writeDir(t, files))
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
		if g.N != 4 || g.F != 3 || g.Classes != 2 || g.NumEdges() != 3 || g.ClassNames[1] != "B b" {
			t.Errorf("meta=%v: N=%d F=%d C=%d E=%d names=%q", meta, g.N, g.F, g.Classes, g.NumEdges(), g.ClassNames)
		}
		if g.Features[2*3+0] != 0.5 || !g.Train[1] || !g.Val[2] || !g.Test[3] {
			t.Errorf("meta=%v: features or split wrong", meta)
		}
	}
}

func TestLoadPlanetoidDirBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  map[string]string // file → new content ("\x00": remove)
		file  string            // the file the error must name
		line  int               // and the line (0: none)
		frags []string          // and these fragments
	}{
		{"truncated edge line", map[string]string{"edges.txt": "0\t1\n1\n"}, "edges.txt", 2,
			[]string{`expected "<u>\t<v>" with integer vertex ids in [0, 4), got "1"`}},
		{"non-numeric edge", map[string]string{"edges.txt": "0\t1\n\n12\tabc\n"}, "edges.txt", 3,
			[]string{`got "12\tabc"`}},
		{"edge id out of range", map[string]string{"edges.txt": "0\t4\n"}, "edges.txt", 1, []string{"[0, 4)"}},
		{"negative edge id", map[string]string{"edges.txt": "-1\t2\n"}, "edges.txt", 1, []string{"[0, 4)"}},
		{"three fields", map[string]string{"edges.txt": "0\t1\t2\n"}, "edges.txt", 1, []string{"expected"}},
		{"missing edges", map[string]string{"edges.txt": "\x00"}, "edges.txt", 0, []string{"does not exist"}},
		{"missing labels", map[string]string{"labels.txt": "\x00"}, "labels.txt", 0, []string{"does not exist"}},
		{"missing split", map[string]string{"split_val.txt": "\x00"}, "split_val.txt", 0, []string{"does not exist"}},
		{"edge count differs from meta", map[string]string{"edges.txt": "0\t1\n1\t2\n"}, "edges.txt", 0,
			[]string{"2 unique undirected edges", "edges = 3"}},
		{"label out of range", map[string]string{"labels.txt": "0\t0\n1\t2\n2\t0\n3\t1\n"}, "labels.txt", 2,
			[]string{"class -1 or an integer in [0, 2)"}},
		{"label node twice", map[string]string{"labels.txt": "0\t0\n1\t1\n1\t0\n3\t1\n"}, "labels.txt", 3,
			[]string{"node 1 listed twice (first on line 2)"}},
		{"label line missing", map[string]string{"labels.txt": "0\t0\n1\t1\n2\t0\n"}, "labels.txt", 0,
			[]string{"no line for node 3"}},
		{"label non-numeric", map[string]string{"labels.txt": "0\t0\n1\tx\n"}, "labels.txt", 2, []string{`got "1\tx"`}},
		{"feature column out of range", map[string]string{"features.txt": "0\t0:1 3:1\n"}, "features.txt", 1,
			[]string{`col an integer in [0, 3)`, `"3:1"`}},
		{"feature value NaN", map[string]string{"features.txt": "0\t0:NaN\n"}, "features.txt", 1, []string{"finite"}},
		{"feature entry truncated", map[string]string{"features.txt": "0\t0:1\n1\t2:\n"}, "features.txt", 2, []string{`"2:"`}},
		{"feature column twice", map[string]string{"features.txt": "0\t1:1 1:2\n"}, "features.txt", 1, []string{"column 1 given twice"}},
		{"feature node twice", map[string]string{"features.txt": "0\t1:1\n0\t2:1\n"}, "features.txt", 2, []string{"node 0 listed twice"}},
		{"split out of range", map[string]string{"split_test.txt": "3\n7\n"}, "split_test.txt", 2, []string{"[0, 4)"}},
		{"splits overlap", map[string]string{"split_test.txt": "3\n2\n"}, "split_test.txt", 2,
			[]string{"node 2 is also in split_val.txt"}},
		{"split unlabeled", map[string]string{"labels.txt": "0\t0\n1\t1\n2\t0\n3\t-1\n"}, "split_test.txt", 1,
			[]string{"node 3 has no label"}},
		{"split duplicate", map[string]string{"split_train.txt": "0\n1\n0\n"}, "split_train.txt", 3, []string{"listed twice"}},
		{"meta unknown key", map[string]string{"meta.toml": "nodes = 4\nfeatures = 3\nclases = 2\n"}, "meta.toml", 3,
			[]string{`unknown key "clases"`}},
		{"meta bad value", map[string]string{"meta.toml": "nodes = four\n"}, "meta.toml", 1, []string{"nodes: expected an integer"}},
		{"class names disagree with meta", map[string]string{"class_names.txt": "0\tA\n1\tB\n2\tC\n"}, "class_names.txt", 0,
			[]string{"3 class names", "classes = 2"}},
		{"class name index out of range", map[string]string{"class_names.txt": "0\tA\n2\tB\n"}, "class_names.txt", 2,
			[]string{"class 2 out of range"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := maps.Clone(tinyFiles)
			maps.Copy(files, tc.edit)
			dir := writeDir(t, files)
			_, err := LoadPlanetoidDir(dir)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			want := filepath.Join(dir, tc.file)
			if tc.line > 0 {
				want += ":" + strconv.Itoa(tc.line) + ":"
			}
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not name %q", msg, want)
			}
			for _, f := range tc.frags {
				if !strings.Contains(msg, f) {
					t.Errorf("error %q lacks %q", msg, f)
				}
			}
			if strings.HasPrefix(tc.name, "missing ") && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errNoFile) {
				t.Errorf("missing file error %v is not errNoFile", err)
			}
		})
	}
}

func TestLoadPlanetoidDirBadGzip(t *testing.T) {
	for _, tc := range []struct {
		name string
		body []byte
		frag string
	}{
		{"truncated", truncatedGzip(), "file is truncated"},
		{"not gzip", []byte("0\t1\n"), "not a valid gzip file"},
	} {
		files := maps.Clone(tinyFiles)
		delete(files, "edges.txt")
		dir := writeDir(t, files)
		if err := os.WriteFile(filepath.Join(dir, "edges.txt.gz"), tc.body, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadPlanetoidDir(dir)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "edges.txt.gz")) || !strings.Contains(err.Error(), tc.frag) {
			t.Errorf("%s: got %v, want an error naming edges.txt.gz with %q", tc.name, err, tc.frag)
		}
	}
}

// truncatedGzip is a valid gzip stream of edge lines cut in half: the
// header survives, the end of the body and the checksum do not.
func truncatedGzip() []byte {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	for i := range 4000 {
		z.Write([]byte(strconv.Itoa(i%4) + "\t" + strconv.Itoa((i*7+1)%4) + "\n"))
	}
	z.Close()
	b := buf.Bytes()
	return b[:len(b)/2]
}

func TestLoadPlanetoidDirNotADir(t *testing.T) {
	if _, err := LoadPlanetoidDir(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("no error for a missing directory")
	}
}
