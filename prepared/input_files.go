package prepared

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"scalegnn/dataset"
	"scalegnn/npy"
)

// EdgeListFiles names the files of an edge-list dataset: a text edge list
// (see dataset.ReadEdgeList; plain or gzipped) and NumPy arrays.
type EdgeListFiles struct {
	Edges string
	// Features is an N×F array of numbers (any float or integer dtype); it
	// fixes N.
	Features string
	// Labels is an integer array of N classes, -1 for unlabeled.
	Labels string
	// Train, Val and Test are each either a boolean mask of length N or an
	// integer array of vertex ids; "" means an empty split.
	Train, Val, Test string
	// Classes is the class count; 0 takes the largest label plus one.
	Classes int
}

// EdgeListInput is an Input over EdgeListFiles. NewEdgeListInput reads the
// labels and masks; edges and features are streamed.
type EdgeListInput struct {
	files            EdgeListFiles
	hdr              InputHeader
	labels           []int32
	train, val, test []bool
}

// NewEdgeListInput checks the files' headers, reads the labels and split,
// and finds whether the edge list is weighted (from its first edge).
func NewEdgeListInput(files EdgeListFiles) (*EdgeListInput, error) {
	in := &EdgeListInput{files: files}
	if files.Edges == "" || files.Features == "" || files.Labels == "" {
		return nil, errors.New("prepare: an edge list needs the edge file, features (.npy) and labels (.npy)")
	}
	// The edge file is the input the user named: a missing one is reported
	// as itself, before the arrays whose paths default to its directory.
	if _, err := os.Stat(files.Edges); err != nil {
		return nil, fmt.Errorf("prepare: edge list: %w", err)
	}
	f, err := npy.Open(files.Features)
	if err != nil {
		return nil, fmt.Errorf("prepare: features: %w", err)
	}
	shape := f.Shape
	f.Close()
	if len(shape) != 2 || shape[0] < 1 || shape[1] < 1 {
		return nil, fmt.Errorf("prepare: %s: shape %v: expected a 2-D array (vertices, features)", files.Features, shape)
	}
	n, width := shape[0], shape[1]
	if n > 1<<31-1 {
		return nil, fmt.Errorf("prepare: %s: %d rows: at most 2^31-1 vertices", files.Features, n)
	}
	if in.labels, err = readLabelsNPY(files.Labels, n); err != nil {
		return nil, err
	}
	classes, err := countClasses(in.labels, files.Classes, files.Labels)
	if err != nil {
		return nil, err
	}
	masks := []*[]bool{&in.train, &in.val, &in.test}
	for k, p := range []string{files.Train, files.Val, files.Test} {
		if *masks[k], err = readMaskNPY(p, n); err != nil {
			return nil, err
		}
	}
	if err := checkSplit(in.labels, in.train, in.val, in.test, [3]string{files.Train, files.Val, files.Test}); err != nil {
		return nil, err
	}
	weighted, err := peekWeighted(files.Edges, n)
	if err != nil {
		return nil, err
	}
	paths := []string{files.Edges, files.Features, files.Labels}
	for _, p := range []string{files.Train, files.Val, files.Test} {
		if p != "" {
			paths = append(paths, p)
		}
	}
	sum, desc, err := hashFiles(paths...)
	if err != nil {
		return nil, err
	}
	in.hdr = InputHeader{
		Name: strings.TrimSuffix(strings.TrimSuffix(filepath.Base(files.Edges), ".gz"), filepath.Ext(strings.TrimSuffix(files.Edges, ".gz"))),
		N:    n, F: width, Classes: classes, Weighted: weighted,
		Source: SourceMeta{Format: "edgelist", Path: files.Edges, SHA256: sum, Description: desc},
	}
	return in, nil
}

func (in *EdgeListInput) Header() InputHeader { return in.hdr }

func (in *EdgeListInput) Vertices() ([]int32, []bool, []bool, []bool, error) {
	return in.labels, in.train, in.val, in.test, nil
}

func (in *EdgeListInput) Edges(emit func(us, vs []int32, ws []float32) error) error {
	r, err := dataset.OpenText(in.files.Edges)
	if err != nil {
		return err
	}
	defer r.Close()
	weighted, err := dataset.ReadEdgeList(r, in.files.Edges, in.hdr.N, emit)
	if err == nil && weighted != in.hdr.Weighted {
		err = fmt.Errorf("%s: changed while being read", in.files.Edges)
	}
	return err
}

func (in *EdgeListInput) Features(emit func(v0 int, rows []float32) error) error {
	f, err := npy.Open(in.files.Features)
	if err != nil {
		return err
	}
	defer f.Close()
	width := in.hdr.F
	buf := make([]float32, max(1, (1<<20)/width)*width)
	for v := 0; f.Remaining() > 0; {
		k, err := f.ReadFloat32(buf)
		if err != nil {
			return err
		}
		if err := checkFinite(buf[:k], width, v, in.files.Features); err != nil {
			return err
		}
		if err := emit(v, buf[:k]); err != nil {
			return err
		}
		v += k / width
	}
	return nil
}

// errPeeked stops ReadEdgeList after its first batch.
var errPeeked = errors.New("peeked")

// peekWeighted reports whether the edge list's first edge has a weight.
func peekWeighted(path string, n int) (bool, error) {
	r, err := dataset.OpenText(path)
	if err != nil {
		return false, err
	}
	defer r.Close()
	var weighted bool
	w, err := dataset.ReadEdgeList(r, path, n, func(us, vs []int32, ws []float32) error {
		weighted = ws != nil
		return errPeeked
	})
	if err == nil {
		return w, nil // fewer edges than one batch: the whole list was read
	}
	if errors.Is(err, errPeeked) {
		return weighted, nil
	}
	return false, err
}

// readLabelsNPY reads an integer array of n labels in [-1, 2^31-1).
func readLabelsNPY(path string, n int) ([]int32, error) {
	f, err := npy.Open(path)
	if err != nil {
		return nil, fmt.Errorf("prepare: labels: %w", err)
	}
	defer f.Close()
	if len(f.Shape) != 1 || f.Shape[0] != n {
		return nil, fmt.Errorf("prepare: %s: shape %v: expected (%d,), one label per vertex (multi-label arrays are not supported)", path, f.Shape, n)
	}
	labels, err := f.ReadAllInt32()
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	for i, l := range labels {
		if l < -1 {
			return nil, fmt.Errorf("prepare: %s: label of vertex %d is %d: expected -1 (unlabeled) or a class >= 0", path, i, l)
		}
	}
	return labels, nil
}

// readMaskNPY reads a split: a boolean mask of length n, or integer vertex
// ids. An empty path is an empty split.
func readMaskNPY(path string, n int) ([]bool, error) {
	m := make([]bool, n)
	if path == "" {
		return m, nil
	}
	f, err := npy.Open(path)
	if err != nil {
		return nil, fmt.Errorf("prepare: split: %w", err)
	}
	defer f.Close()
	if len(f.Shape) != 1 {
		return nil, fmt.Errorf("prepare: %s: shape %v: expected a 1-D boolean mask or array of vertex ids", path, f.Shape)
	}
	if f.Descr == npy.Bool {
		if f.Shape[0] != n {
			return nil, fmt.Errorf("prepare: %s: boolean mask of length %d: expected %d, one per vertex", path, f.Shape[0], n)
		}
		b, err := f.ReadAllBool()
		if err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
		return b, nil
	}
	ids, err := f.ReadAllInt64()
	if err != nil {
		return nil, fmt.Errorf("prepare: %s: expected a boolean mask or integer vertex ids: %w", path, err)
	}
	for k, id := range ids {
		if id < 0 || id >= int64(n) {
			return nil, fmt.Errorf("prepare: %s: element %d is vertex %d: expected an id in [0, %d)", path, k, id, n)
		}
		if m[id] {
			return nil, fmt.Errorf("prepare: %s: vertex %d listed twice", path, id)
		}
		m[id] = true
	}
	return m, nil
}

// countClasses checks the labels against classes (0: derive it).
func countClasses(labels []int32, classes int, name string) (int, error) {
	mx := int32(-1)
	for _, l := range labels {
		mx = max(mx, l)
	}
	if classes == 0 {
		if mx < 0 {
			return 0, fmt.Errorf("prepare: %s: no vertex has a label", name)
		}
		return int(mx) + 1, nil
	}
	if int(mx) >= classes {
		return 0, fmt.Errorf("prepare: %s: label %d: expected classes in [0, %d) (-classes)", name, mx, classes)
	}
	return classes, nil
}

// checkSplit checks that the splits are disjoint and hold labeled vertices
// only.
func checkSplit(labels []int32, train, val, test []bool, names [3]string) error {
	for i := range labels {
		in := 0
		for k, m := range [][]bool{train, val, test} {
			if !m[i] {
				continue
			}
			in++
			if labels[i] < 0 {
				return fmt.Errorf("prepare: %s: vertex %d has no label (-1) and cannot be in a split", names[k], i)
			}
			if in > 1 {
				return fmt.Errorf("prepare: %s: vertex %d is in another split too; the splits must be disjoint", names[k], i)
			}
		}
	}
	return nil
}

// OGBInput is an Input over an Open Graph Benchmark node-property dataset
// in its raw layout: raw/num-node-list.csv, raw/edge.csv,
// raw/node-feat.csv, raw/node-label.csv and split/<scheme>/{train,valid,
// test}.csv, each plain or gzipped (.csv.gz). The edges are directed as
// given; Prepare symmetrises them by default.
type OGBInput struct {
	dir, split       string
	files            map[string]string
	hdr              InputHeader
	labels           []int32
	train, val, test []bool
}

// NewOGBInput finds the files, reads the vertex count, the labels and the
// split, and the feature width (from the first feature line). split names
// the split scheme directory; "" picks the only one.
func NewOGBInput(dir, split string) (*OGBInput, error) {
	in := &OGBInput{dir: dir, files: map[string]string{}}
	if split == "" {
		ents, err := os.ReadDir(filepath.Join(dir, "split"))
		if err != nil {
			return nil, fmt.Errorf("prepare: OGB dataset %s: %w", dir, err)
		}
		var names []string
		for _, e := range ents {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
		if len(names) != 1 {
			return nil, fmt.Errorf("prepare: %s: %d split schemes (%s): choose one with -split", filepath.Join(dir, "split"), len(names), strings.Join(names, ", "))
		}
		split = names[0]
	}
	in.split = split
	for _, f := range [][2]string{
		{"nodes", "raw/num-node-list"}, {"edges", "raw/edge"}, {"feat", "raw/node-feat"}, {"label", "raw/node-label"},
		{"train", "split/" + split + "/train"}, {"valid", "split/" + split + "/valid"}, {"test", "split/" + split + "/test"},
	} {
		p, err := findCSV(filepath.Join(dir, f[1]))
		if err != nil {
			return nil, err
		}
		in.files[f[0]] = p
	}
	n, err := readWith(in.files["nodes"], func(r *textFile) (int, error) { return dataset.ReadOGBNumNodes(r, r.name) })
	if err != nil {
		return nil, err
	}
	if in.labels, err = readWith(in.files["label"], func(r *textFile) ([]int32, error) { return dataset.ReadOGBLabels(r, r.name, n) }); err != nil {
		return nil, err
	}
	classes, err := countClasses(in.labels, 0, in.files["label"])
	if err != nil {
		return nil, err
	}
	masks := []*[]bool{&in.train, &in.val, &in.test}
	keys := []string{"train", "valid", "test"}
	for k, key := range keys {
		m := make([]bool, n)
		ids, err := readWith(in.files[key], func(r *textFile) ([]int32, error) {
			ids, _, err := dataset.ReadOGBSplit(r, r.name, n)
			return ids, err
		})
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			m[id] = true
		}
		*masks[k] = m
	}
	if err := checkSplit(in.labels, in.train, in.val, in.test, [3]string{in.files["train"], in.files["valid"], in.files["test"]}); err != nil {
		return nil, err
	}
	width, err := readWith(in.files["feat"], func(r *textFile) (int, error) {
		w := 0
		_, err := dataset.ReadOGBFeatures(r, r.name, n, func(v0 int, rows []float32, f int) error {
			w = f
			return errPeeked
		})
		if errors.Is(err, errPeeked) {
			err = nil
		}
		return w, err
	})
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, key := range []string{"nodes", "edges", "feat", "label", "train", "valid", "test"} {
		paths = append(paths, in.files[key])
	}
	sum, desc, err := hashFiles(paths...)
	if err != nil {
		return nil, err
	}
	in.hdr = InputHeader{
		Name: filepath.Base(filepath.Clean(dir)), N: n, F: width, Classes: classes,
		Source: SourceMeta{Format: "ogb", Path: dir, SHA256: sum, Description: "split " + split + ", " + desc},
	}
	return in, nil
}

func (in *OGBInput) Header() InputHeader { return in.hdr }

func (in *OGBInput) Vertices() ([]int32, []bool, []bool, []bool, error) {
	return in.labels, in.train, in.val, in.test, nil
}

func (in *OGBInput) Edges(emit func(us, vs []int32, ws []float32) error) error {
	_, err := readWith(in.files["edges"], func(r *textFile) (struct{}, error) {
		return struct{}{}, dataset.ReadOGBEdges(r, r.name, in.hdr.N, func(us, vs []int32) error { return emit(us, vs, nil) })
	})
	return err
}

func (in *OGBInput) Features(emit func(v0 int, rows []float32) error) error {
	_, err := readWith(in.files["feat"], func(r *textFile) (struct{}, error) {
		_, err := dataset.ReadOGBFeatures(r, r.name, in.hdr.N, func(v0 int, rows []float32, f int) error {
			if f != in.hdr.F {
				return fmt.Errorf("%s: %d features per line, expected %d", r.name, f, in.hdr.F)
			}
			return emit(v0, rows)
		})
		return struct{}{}, err
	})
	return err
}

// findCSV returns base.csv.gz or base.csv, whichever exists.
func findCSV(base string) (string, error) {
	for _, p := range []string{base + ".csv.gz", base + ".csv"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("prepare: %s.csv.gz: no such file (nor %s.csv): expected the OGB raw layout (raw/edge.csv.gz, raw/node-feat.csv.gz, raw/node-label.csv.gz, raw/num-node-list.csv.gz, split/<scheme>/{train,valid,test}.csv.gz)", base, filepath.Base(base))
}

// textFile is an open text file with its name.
type textFile struct {
	io.Reader
	name string
}

// readWith opens path (gzip or plain) and runs read on it.
func readWith[T any](path string, read func(*textFile) (T, error)) (T, error) {
	var zero T
	r, err := dataset.OpenText(path)
	if err != nil {
		return zero, err
	}
	defer r.Close()
	return read(&textFile{Reader: r, name: path})
}
