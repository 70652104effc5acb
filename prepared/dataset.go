package prepared

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"scalegnn/gcn"
	"scalegnn/npy"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// LoadOptions controls how a Dataset presents its data.
type LoadOptions struct {
	// NormalizeFeatures row-normalises every feature row as it is read,
	// exactly as dataset.RowNormalize does (the job file's
	// dataset.normalize_features).
	NormalizeFeatures bool
}

// Dataset is a prepared dataset opened for reading. It implements
// gcn.Source: every method reads only the files that overlap the requested
// ranges and verifies each file's size and SHA-256 against the metadata
// before using it. It is safe for concurrent use.
type Dataset struct {
	Meta   *Meta
	dir    string
	opt    LoadOptions
	files  map[string]FileMeta
	orders *gcn.Orders

	vertOnce         sync.Once
	vertErr          error
	labels           []int32
	train, val, test []bool
}

var _ gcn.Source = (*Dataset)(nil)

// Open reads the metadata of the prepared dataset in dir and its vertex
// orders (O(N)); blocks are read on demand.
func Open(dir string, opt LoadOptions) (*Dataset, error) {
	m, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Meta: m, dir: dir, opt: opt, files: map[string]FileMeta{}}
	for _, f := range m.Files {
		d.files[f.Path] = f
	}
	n := m.Nodes
	p1, err := d.readOrder(0)
	if err != nil {
		return nil, err
	}
	p2 := p1
	if d.double() {
		if p2, err = d.readOrder(1); err != nil {
			return nil, err
		}
	}
	d.orders = gcn.NewOrders(n, p1, p2)
	return d, nil
}

func (d *Dataset) double() bool { return d.Meta.Permute.Scheme == permute.Double }

// Dir is the dataset's directory.
func (d *Dataset) Dir() string { return d.dir }

// Sizes returns the vertices, features and classes of meta.toml.
func (d *Dataset) Sizes() gcn.Sizes {
	return gcn.Sizes{N: d.Meta.Nodes, Features: d.Meta.Features, Classes: d.Meta.Classes}
}

// Orders returns the vertex orders: position i of order k holds original
// vertex Order[k][i] (p1 and p2 of the prepare-time permutation).
func (d *Dataset) Orders() *gcn.Orders { return d.orders }

// read reads the dataset file rel whole, checks its size and SHA-256
// against the metadata, parses its .npy header and checks the dtype and
// the shape.
func (d *Dataset) read(rel, descr string, shape ...int) (*npy.Reader, error) {
	path := filepath.Join(d.dir, rel)
	fm, ok := d.files[rel]
	if !ok {
		return nil, fmt.Errorf("%s: not listed in %s", path, filepath.Join(d.dir, MetaFile))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: missing: the file is listed in %s but does not exist (incomplete copy of the dataset?)", path, MetaFile)
		}
		return nil, err
	}
	if int64(len(data)) != fm.Bytes {
		return nil, fmt.Errorf("%s: %d bytes, but %s says %d: the file is truncated or was modified", path, len(data), MetaFile, fm.Bytes)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != fm.SHA256 {
		return nil, fmt.Errorf("%s: SHA-256 mismatch with %s: the file is corrupt or was modified after prepare", path, MetaFile)
	}
	r, err := npy.Parse(data, path)
	if err != nil {
		return nil, err
	}
	if r.Descr != descr || !slices.Equal(r.Shape, shape) {
		return nil, fmt.Errorf("%s: dtype %s, shape %v: expected dtype %s, shape %v from %s", path, r.Descr, r.Shape, descr, shape, MetaFile)
	}
	return r, nil
}

func (d *Dataset) readOrder(k int) ([]int32, error) {
	r, err := d.read(orderFile(k), npy.Int32, d.Meta.Nodes)
	if err != nil {
		return nil, err
	}
	p, err := r.ReadAllInt32()
	if err != nil {
		return nil, err
	}
	seen := make([]bool, len(p))
	for i, v := range p {
		if v < 0 || int(v) >= len(p) || seen[v] {
			return nil, fmt.Errorf("%s: entry %d is %d: not a permutation of [0, %d)", r.Name(), i, v, len(p))
		}
		seen[v] = true
	}
	return p, nil
}

// checkRange panics on a range outside [0, n): the caller's mistake.
func checkRange(what string, lo, hi, n int) {
	if lo < 0 || hi < lo || hi > n {
		panic(fmt.Sprintf("prepared: %s range [%d, %d) outside [0, %d)", what, lo, hi, n))
	}
}

// AdjBlock returns the block of Â with rows at positions [r0, r1) of order
// rowOrder and columns at positions [c0, c1) of order colOrder. Without
// double permutation both orders are the same; with it, only (0, 1) and
// (1, 0) exist (the layer shards' Â[p1][:, p2] and Â[p2][:, p1]).
func (d *Dataset) AdjBlock(rowOrder, r0, r1, colOrder, c0, c1 int) (*spmm.CSR, error) {
	n := d.Meta.Nodes
	checkRange("row", r0, r1, n)
	checkRange("column", c0, c1, n)
	if !d.double() {
		return d.assemble(0, r0, r1, c0, c1)
	}
	switch {
	case rowOrder == 0 && colOrder == 1:
		return d.assemble(0, r0, r1, c0, c1)
	case rowOrder == 1 && colOrder == 0 && d.Meta.Orientations == 2:
		return d.assemble(1, r0, r1, c0, c1)
	case rowOrder == 1 && colOrder == 0:
		// Â is symmetric and unweighted: Â[p2][:, p1] = (Â[p1][:, p2])ᵀ,
		// bit for bit.
		t, err := d.assemble(0, c0, c1, r0, r1)
		if err != nil {
			return nil, err
		}
		return spmm.Transpose(t), nil
	}
	return nil, fmt.Errorf("%s: a double-permuted dataset stores Â[p1][:, p2] and Â[p2][:, p1] only, not rows in order %d and columns in order %d",
		d.dir, rowOrder, colOrder)
}

// FeatureBlock returns the features of the vertices at positions [r0, r1)
// of order, columns [c0, c1), row-major. Features are stored in order 1
// (p2, the input order of the first layer); with double permutation order
// 0 is not available.
func (d *Dataset) FeatureBlock(order, r0, r1, c0, c1 int) ([]float32, error) {
	m := d.Meta
	checkRange("row", r0, r1, m.Nodes)
	if c0 < 0 || c1 < c0 || c1 > m.Features {
		return nil, fmt.Errorf("%s: feature columns [%d, %d) of a dataset with %d features", d.dir, c0, c1, m.Features)
	}
	if d.double() && order != 1 {
		return nil, fmt.Errorf("%s: features are stored in order 1 (p2) only, not in order %d", d.dir, order)
	}
	f := m.Features
	x := make([]float32, 0, (r1-r0)*(c1-c0))
	if r0 == r1 {
		return x, nil
	}
	norm := make([]float32, f)
	for i := blockOf(m, r0); i <= blockOf(m, r1-1); i++ {
		b0, b1 := blockRange(m, i)
		r, err := d.read(featureFile(i), npy.Float32, b1-b0, f)
		if err != nil {
			return nil, err
		}
		blk, err := r.ReadAllFloat32()
		if err != nil {
			return nil, err
		}
		for v := max(r0, b0); v < min(r1, b1); v++ {
			row := blk[(v-b0)*f : (v-b0+1)*f]
			if d.opt.NormalizeFeatures {
				normalizeRow(norm, row)
				row = norm
			}
			x = append(x, row[c0:c1]...)
		}
	}
	return x, nil
}

// normalizeRow writes row scaled to sum 1 into dst, as dataset.RowNormalize
// does (a zero-sum row is copied unchanged).
func normalizeRow(dst, row []float32) {
	var s float64
	for _, x := range row {
		s += float64(x)
	}
	if s == 0 {
		copy(dst, row)
		return
	}
	inv := 1 / s
	for j, x := range row {
		dst[j] = float32(float64(x) * inv)
	}
}

// Labels returns the labels and split masks of the vertices at positions
// [r0, r1) of order. The first call reads labels.npy and the masks (O(N)).
func (d *Dataset) Labels(order, r0, r1 int) ([]int32, []bool, []bool, []bool, error) {
	checkRange("row", r0, r1, d.Meta.Nodes)
	if order < 0 || order > 1 {
		panic(fmt.Sprintf("prepared: Labels: order %d, want 0 or 1", order))
	}
	d.vertOnce.Do(func() { d.vertErr = d.readVertices() })
	if d.vertErr != nil {
		return nil, nil, nil, nil, d.vertErr
	}
	verts := d.orders.Order[order][r0:r1]
	return gather(d.labels, verts), gather(d.train, verts), gather(d.val, verts), gather(d.test, verts), nil
}

// gather returns x[verts[i]] for every i.
func gather[T any](x []T, verts []int32) []T {
	y := make([]T, len(verts))
	for i, v := range verts {
		y[i] = x[v]
	}
	return y
}

func (d *Dataset) readVertices() error {
	m := d.Meta
	r, err := d.read(labelsFile, npy.Int32, m.Nodes)
	if err != nil {
		return err
	}
	if d.labels, err = r.ReadAllInt32(); err != nil {
		return err
	}
	for i, l := range d.labels {
		if l < -1 || int(l) >= m.Classes {
			return fmt.Errorf("%s: label of vertex %d is %d: expected -1 or a class in [0, %d)", r.Name(), i, l, m.Classes)
		}
	}
	counts := []int{m.Train, m.Val, m.Test}
	for k, x := range []struct {
		file string
		mask *[]bool
	}{{trainFile, &d.train}, {valFile, &d.val}, {testFile, &d.test}} {
		r, err := d.read(x.file, npy.Bool, m.Nodes)
		if err != nil {
			return err
		}
		if *x.mask, err = r.ReadAllBool(); err != nil {
			return err
		}
		c := 0
		for i, b := range *x.mask {
			if b {
				c++
				if d.labels[i] < 0 {
					return fmt.Errorf("%s: vertex %d is unlabeled but in the split", r.Name(), i)
				}
			}
		}
		if c != counts[k] {
			return fmt.Errorf("%s: %d vertices, but %s says %d", r.Name(), c, MetaFile, counts[k])
		}
	}
	return nil
}
