package dataset

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// source is a directory of Planetoid text files, on disk or embedded.
type source struct {
	fsys fs.FS
	// label turns the name of an opened file into the name used in
	// messages (a path the user can find).
	label func(opened string) string
}

// errNoFile marks a missing file; loaders treat some files as optional.
var errNoFile = errors.New("file does not exist")

// open opens base, or base+".gz" through gzip when base is absent (the
// plain file wins when both exist). It returns the reader and the label.
func (s source) open(base string) (io.ReadCloser, string, error) {
	f, err := s.fsys.Open(base)
	name := base
	if errors.Is(err, fs.ErrNotExist) {
		name = base + ".gz"
		f, err = s.fsys.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, s.label(base), fmt.Errorf("dataset: %s: %w (nor %s.gz)", s.label(base), errNoFile, base)
		}
	}
	label := s.label(name)
	if err != nil {
		return nil, label, fmt.Errorf("dataset: %s: %w", label, err)
	}
	if !strings.HasSuffix(name, ".gz") {
		return f, label, nil
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, label, fmt.Errorf("dataset: %s: not a valid gzip file: %w", label, err)
	}
	return gzipFile{z, f}, label, nil
}

type gzipFile struct {
	*gzip.Reader
	f fs.File
}

func (g gzipFile) Close() error {
	g.Reader.Close()
	return g.f.Close()
}

// parseFile opens base and runs parse on it; a missing file is an error
// unless optional, in which case parse is not called and found is false.
func (s source) parseFile(base string, optional bool, parse func(r io.Reader, label string) error) (found bool, err error) {
	rc, label, err := s.open(base)
	if err != nil {
		if optional && errors.Is(err, errNoFile) {
			return false, nil
		}
		return false, err
	}
	defer rc.Close()
	return true, parse(rc, label)
}

// LoadPlanetoidDir reads a dataset in the Planetoid text format (the format
// of the built-in datasets, described in planetoid/README.md) from dir.
// Each file may be plain or gzipped (name.txt.gz). Required: labels.txt
// (one line per node; it fixes N), features.txt, edges.txt and the three
// split files. Optional: class_names.txt, and meta.toml giving nodes,
// features, classes and edges (unique undirected non-loop edges) to check
// against; without it the feature width is one more than the largest
// column and the class count comes from class_names.txt or the labels.
//
// The adjacency is symmetrised with duplicates merged and self loops
// dropped. Every problem in the files is returned as an error naming the
// file and, where it applies, the line.
func LoadPlanetoidDir(dir string) (*Graph, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("dataset: %s is not a directory", dir)
	}
	src := source{fsys: os.DirFS(dir), label: func(n string) string { return filepath.Join(dir, n) }}
	return loadPlanetoid(src, filepath.Base(filepath.Clean(dir)))
}

func loadPlanetoid(src source, name string) (*Graph, error) {
	meta := planetoidMeta{Nodes: -1, Features: -1, Classes: -1, Edges: -1}
	var metaLabel string
	if _, err := src.parseFile("meta.toml", true, func(r io.Reader, label string) (err error) {
		metaLabel = label
		meta, err = parseMeta(r, label)
		return err
	}); err != nil {
		return nil, err
	}

	g := &Graph{Name: name}
	classes := meta.Classes
	if _, err := src.parseFile("class_names.txt", true, func(r io.Reader, label string) (err error) {
		g.ClassNames, err = parseClassNames(r, label)
		if err == nil && classes >= 0 && len(g.ClassNames) != classes {
			err = errAt(label, 0, "%d class names, but %s says classes = %d", len(g.ClassNames), metaLabel, classes)
		}
		classes = len(g.ClassNames)
		return err
	}); err != nil {
		return nil, err
	}

	if _, err := src.parseFile("labels.txt", false, func(r io.Reader, label string) (err error) {
		g.Labels, err = parseLabels(r, label, meta.Nodes, classes)
		return err
	}); err != nil {
		return nil, err
	}
	g.N = len(g.Labels)
	if classes < 0 {
		for _, l := range g.Labels {
			classes = max(classes, int(l)+1)
		}
		classes = max(classes, 0)
	}
	g.Classes = classes

	if _, err := src.parseFile("features.txt", false, func(r io.Reader, label string) (err error) {
		g.Features, g.F, err = parseFeatures(r, label, g.N, meta.Features)
		return err
	}); err != nil {
		return nil, err
	}

	if _, err := src.parseFile("edges.txt", false, func(r io.Reader, label string) error {
		us, vs, err := parseEdges(r, label, g.N)
		if err != nil {
			return err
		}
		g.Adj = symmetricAdj(g.N, us, vs)
		if meta.Edges >= 0 && int64(g.NumEdges()) != meta.Edges {
			return errAt(label, 0, "%d unique undirected edges without self loops, but %s says edges = %d (truncated file?)",
				g.NumEdges(), metaLabel, meta.Edges)
		}
		return nil
	}); err != nil {
		return nil, err
	}

	// owner[i] is 1 + the index of the split that holds vertex i.
	owner := make([]uint8, g.N)
	splits := []struct {
		file string
		mask *[]bool
	}{{"split_train.txt", &g.Train}, {"split_val.txt", &g.Val}, {"split_test.txt", &g.Test}}
	for k, sp := range splits {
		if _, err := src.parseFile(sp.file, false, func(r io.Reader, label string) error {
			ids, lines, err := parseSplit(r, label, g.N)
			if err != nil {
				return err
			}
			m := make([]bool, g.N)
			for j, id := range ids {
				if g.Labels[id] < 0 {
					return errAt(label, int(lines[j]), "node %d has no label (class -1) and cannot be in a split", id)
				}
				if o := owner[id]; o != 0 {
					return errAt(label, int(lines[j]), "node %d is also in %s; the splits must be disjoint", id, splits[o-1].file)
				}
				owner[id] = uint8(k + 1)
				m[id] = true
			}
			*sp.mask = m
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// BuiltinNames lists the datasets Builtin knows, sorted.
func BuiltinNames() []string {
	ents, err := fs.ReadDir(builtinFS, "planetoid")
	if err != nil {
		panic("dataset: embedded data missing: " + err.Error()) // a build defect, not input
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

// Builtin returns one of the datasets embedded in the binary: "cora" or
// "citeseer" (Planetoid split; see planetoid/README.md for sources and
// licences). Each call parses afresh, so the caller owns the result.
func Builtin(name string) (*Graph, error) {
	names := BuiltinNames()
	if !slices.Contains(names, name) {
		return nil, fmt.Errorf("dataset: unknown built-in dataset %q; valid names are %s", name, strings.Join(names, ", "))
	}
	sub, err := fs.Sub(builtinFS, "planetoid/"+name)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", name, err)
	}
	// Messages name the logical file ("cora/edges.txt") rather than the
	// embedded .gz, as that is what a user would look up in the README.
	src := source{fsys: sub, label: func(n string) string { return name + "/" + strings.TrimSuffix(n, ".gz") }}
	return loadPlanetoid(src, name)
}
