package prepared

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"scalegnn/gcn"
	"scalegnn/internal/hugepage"
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
	// Progress, when set, is called with a file's path in the dataset
	// (as in meta.toml: "adj0/...", "features/...") each time a file has
	// been read whole and verified: the pieces of a load, for a caller
	// that watches for stalls (the job's watchdog). It may be called
	// from concurrent readers.
	Progress func(what string)
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

	// seen are the files verified whole against their digests, as they
	// were then (verified.close; guarded by seenMu: a loader's prefetch
	// reads beside the training goroutine).
	seenMu sync.Mutex
	seen   map[string]os.FileInfo
	// loaded ends the reports to LoadOptions.Progress (EndLoad).
	loaded atomic.Bool
}

var _ gcn.Source = (*Dataset)(nil)

// EndLoad says the job's load is over: later reads (out-of-core training
// reads partitions as it goes, layer-wise evaluation strips) are no
// longer pieces of the load, and are not reported to
// LoadOptions.Progress, whose watchdog stage would otherwise replace the
// step's and count a background read as the step's progress. Safe to call
// while reads are in flight.
func (d *Dataset) EndLoad() { d.loaded.Store(true) }

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

// FeatureBytes is the bytes a stored feature takes on disk (2 for a
// bfloat16 dataset, 4 for float32): what a reader of features counts as
// read. The features it returns are float32 either way.
func (d *Dataset) FeatureBytes() int { return d.Meta.FeatureBytes() }

// Orders returns the vertex orders: position i of order k holds original
// vertex Order[k][i] (p1 and p2 of the prepare-time permutation).
func (d *Dataset) Orders() *gcn.Orders { return d.orders }

// path is the full path of the dataset file rel, for messages.
func (d *Dataset) path(rel string) string { return filepath.Join(d.dir, rel) }

func (d *Dataset) readOrder(k int) ([]int32, error) {
	p, err := readArray(d, nil, fillInt32, orderFile(k), npy.Int32, d.Meta.Nodes)
	if err != nil {
		return nil, err
	}
	seen := make([]bool, len(p))
	for i, v := range p {
		if v < 0 || int(v) >= len(p) || seen[v] {
			return nil, fmt.Errorf("%s: entry %d is %d: not a permutation of [0, %d)", d.path(orderFile(k)), i, v, len(p))
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

// orientation returns the stored orientation that holds the block with
// rows in order rowOrder and columns in order colOrder, and whether the
// block is its transpose (the mirrored block of a symmetric Â). Without
// double permutation both orders are the same; with it, only (0, 1) and
// (1, 0) exist (the layer shards' Â[p1][:, p2] and Â[p2][:, p1]).
func (d *Dataset) orientation(rowOrder, colOrder int) (k int, mirrored bool, err error) {
	switch {
	case !d.double(), rowOrder == 0 && colOrder == 1:
		return 0, false, nil
	case rowOrder == 1 && colOrder == 0 && d.Meta.Orientations == 2:
		return 1, false, nil
	case rowOrder == 1 && colOrder == 0:
		// Â is symmetric and unweighted: Â[p2][:, p1] = (Â[p1][:, p2])ᵀ,
		// bit for bit.
		return 0, true, nil
	}
	return 0, false, fmt.Errorf("%s: a double-permuted dataset stores Â[p1][:, p2] and Â[p2][:, p1] only, not rows in order %d and columns in order %d",
		d.dir, rowOrder, colOrder)
}

// Mirrored reports that the block with rows in rowOrder and columns in
// colOrder is not stored but is the transpose of its stored mirror (rows
// in colOrder, columns in rowOrder): gcn.NewShards, needing a shard and
// its transpose, reads the mirror and transposes once.
func (d *Dataset) Mirrored(rowOrder, colOrder int) bool {
	_, m, err := d.orientation(rowOrder, colOrder)
	return err == nil && m
}

// AdjBlockNNZ is the number of nonzeros of the block AdjBlock returns: the
// size of the arrays AdjBlockInto fills. For blocks cut along stored block
// boundaries it comes from the metadata; otherwise it reads the row
// pointers (and, for cut columns, the entries) of the blocks cut.
func (d *Dataset) AdjBlockNNZ(rowOrder, r0, r1, colOrder, c0, c1 int) (int64, error) {
	n := d.Meta.Nodes
	checkRange("row", r0, r1, n)
	checkRange("column", c0, c1, n)
	k, mirrored, err := d.orientation(rowOrder, colOrder)
	if err != nil {
		return 0, err
	}
	if mirrored {
		r0, r1, c0, c1 = c0, c1, r0, r1
	}
	return d.nnz(k, r0, r1, c0, c1)
}

// AdjBlock returns the block of Â with rows at positions [r0, r1) of order
// rowOrder and columns at positions [c0, c1) of order colOrder: arrays
// sized by AdjBlockNNZ, filled by AdjBlockInto.
func (d *Dataset) AdjBlock(rowOrder, r0, r1, colOrder, c0, c1 int) (*spmm.CSR, error) {
	nnz, err := d.AdjBlockNNZ(rowOrder, r0, r1, colOrder, c0, c1)
	if err != nil {
		return nil, err
	}
	a := &spmm.CSR{RowPtr: hugepage.Make[int64](r1 - r0 + 1), ColIdx: hugepage.Make[int32](int(nnz)), Val: hugepage.Make[float32](int(nnz))}
	return a, d.AdjBlockInto(a, rowOrder, r0, r1, colOrder, c0, c1)
}

// AdjBlockInto writes the block AdjBlock returns into memory the caller
// provides: dst.RowPtr of r1-r0+1 entries, dst.ColIdx and dst.Val of
// AdjBlockNNZ entries (a size that does not match is an error after the
// read). Values go from the file through two reused block buffers into dst;
// each file is read once and its SHA-256 checked as it streams. A mirrored
// block is assembled and transposed, so it needs a temporary copy; see
// Mirrored.
func (d *Dataset) AdjBlockInto(dst *spmm.CSR, rowOrder, r0, r1, colOrder, c0, c1 int) error {
	n := d.Meta.Nodes
	checkRange("row", r0, r1, n)
	checkRange("column", c0, c1, n)
	if len(dst.RowPtr) != r1-r0+1 || len(dst.ColIdx) != len(dst.Val) {
		panic(fmt.Sprintf("prepared: AdjBlockInto: %d row pointers for %d rows, %d column indices and %d values",
			len(dst.RowPtr), r1-r0, len(dst.ColIdx), len(dst.Val)))
	}
	k, mirrored, err := d.orientation(rowOrder, colOrder)
	if err != nil {
		return err
	}
	dst.Rows, dst.Cols = r1-r0, c1-c0
	if !mirrored {
		return d.assembleInto(dst, k, r0, r1, c0, c1)
	}
	t, err := d.AdjBlock(colOrder, c0, c1, rowOrder, r0, r1)
	if err != nil {
		return err
	}
	if len(t.ColIdx) != len(dst.ColIdx) {
		return fmt.Errorf("%s: rows [%d, %d) of order %d have %d nonzeros, not the %d counted for them: the dataset changed while it was read",
			d.dir, r0, r1, rowOrder, len(t.ColIdx), len(dst.ColIdx))
	}
	// Straight into dst: no second temporary of the block's size.
	spmm.TransposeInto(dst, t, 0)
	return nil
}

// FeatureBlock returns the features of the vertices at positions [r0, r1)
// of order, columns [c0, c1), row-major (FeatureBlockInto into a new
// slice).
func (d *Dataset) FeatureBlock(order, r0, r1, c0, c1 int) ([]float32, error) {
	checkRange("row", r0, r1, d.Meta.Nodes)
	if c0 < 0 || c1 < c0 || c1 > d.Meta.Features {
		return nil, fmt.Errorf("%s: feature columns [%d, %d) of a dataset with %d features", d.dir, c0, c1, d.Meta.Features)
	}
	x := hugepage.Make[float32]((r1 - r0) * (c1 - c0))
	return x, d.FeatureBlockInto(x, order, r0, r1, c0, c1)
}

// featureChunk is how many values of a feature block FeatureBlockInto
// reads at a time when it cannot read straight into dst (4 MiB).
const featureChunk = 1 << 20

// FeatureBlockInto writes the features of the vertices at positions
// [r0, r1) of order, columns [c0, c1), row-major, into dst, which holds
// (r1-r0)·(c1-c0) values. Features are stored in order 1 (p2, the input
// order of the first layer); with double permutation order 0 is not
// available. Each feature file is read once, hashed as it streams: whole
// rows go straight into dst, others through a small reused buffer (where
// rows are normalised and their columns picked). A bfloat16 dataset's
// features are widened exactly (spmm.FromBF16) as they are read, before
// any normalisation, which is then the float32 one.
func (d *Dataset) FeatureBlockInto(dst []float32, order, r0, r1, c0, c1 int) error {
	m := d.Meta
	checkRange("row", r0, r1, m.Nodes)
	if c0 < 0 || c1 < c0 || c1 > m.Features {
		return fmt.Errorf("%s: feature columns [%d, %d) of a dataset with %d features", d.dir, c0, c1, m.Features)
	}
	if len(dst) != (r1-r0)*(c1-c0) {
		panic(fmt.Sprintf("prepared: FeatureBlockInto: %d values for %d rows and %d columns", len(dst), r1-r0, c1-c0))
	}
	if d.double() && order != 1 {
		return fmt.Errorf("%s: features are stored in order 1 (p2) only, not in order %d", d.dir, order)
	}
	if r0 == r1 {
		return nil
	}
	f, w := m.Features, c1-c0
	direct := c0 == 0 && c1 == f && !d.opt.NormalizeFeatures
	var buf []float32
	if !direct && f > 0 {
		buf = make([]float32, max(1, featureChunk/f)*f)
	}
	fill := func(v *verified, x []float32) error { return v.FillFiniteFloat32(x) }
	if m.BF16Features() {
		var h []uint16
		fill = func(v *verified, x []float32) error { return fillBF16(v, x, &h) }
	}
	for i := blockOf(m, r0); i <= blockOf(m, r1-1); i++ {
		b0, b1 := blockRange(m, i)
		lo, hi := max(r0, b0), min(r1, b1)
		v, err := d.open(featureFile(i), m.featureDescr(), b1-b0, f)
		if err != nil {
			return err
		}
		err = v.Skip((lo - b0) * f)
		out := dst[(lo-r0)*w : (hi-r0)*w]
		switch {
		case err != nil:
		case direct:
			err = fill(v, out)
		default:
			for r := lo; r < hi && err == nil; {
				rows := min(hi-r, len(buf)/f)
				chunk := buf[:rows*f]
				if err = fill(v, chunk); err != nil {
					break
				}
				for q := range rows {
					row := chunk[q*f : (q+1)*f]
					if d.opt.NormalizeFeatures {
						normalizeRow(row, row)
					}
					copy(out[(r-lo+q)*w:(r-lo+q+1)*w], row[c0:c1])
				}
				r += rows
			}
		}
		if err == nil {
			err = v.Skip((b1 - hi) * f)
		}
		if err != nil {
			err = v.damaged(err)
			v.f.Close()
			var nf *npy.NonFiniteError
			if errors.As(err, &nf) {
				r, c := nf.RowCol()
				return fmt.Errorf("%s: row %d, column %d (vertex position %d of order 1, feature %d) is %v: the features must be finite; fix the source and prepare the dataset again",
					nf.Name, r, c, b0+r, c, nf.Value)
			}
			return err
		}
		if err := v.close(); err != nil {
			return err
		}
	}
	return nil
}

// fillBF16 reads len(x) bfloat16 features of v (a '<u2' array) and widens
// them exactly into x (spmm.FromBF16), through *h, a buffer of at most
// featureChunk words it grows as needed; a NaN or infinity is refused as
// FillFiniteFloat32 refuses it (*npy.NonFiniteError).
func fillBF16(v *verified, x []float32, h *[]uint16) error {
	for len(x) > 0 {
		k := min(len(x), featureChunk)
		if cap(*h) < k {
			*h = make([]uint16, k)
		}
		buf := (*h)[:k]
		pos := v.Len() - v.Remaining()
		if err := v.FillUint16(buf); err != nil {
			return err
		}
		out := x[:k]
		for j, b := range buf {
			out[j] = spmm.FromBF16(b)
		}
		if j := npy.FirstNonFinite(out); j >= 0 {
			return &npy.NonFiniteError{Name: v.Name(), Index: pos + j, Shape: v.Shape, Value: out[j]}
		}
		x = x[k:]
	}
	return nil
}

// normalizeRow writes row scaled to sum 1 into dst (which may be row), as
// dataset.RowNormalize does (a zero-sum row is copied unchanged).
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
	var err error
	if d.labels, err = readArray(d, nil, fillInt32, labelsFile, npy.Int32, m.Nodes); err != nil {
		return err
	}
	for i, l := range d.labels {
		if l < -1 || int(l) >= m.Classes {
			return fmt.Errorf("%s: label of vertex %d is %d: expected -1 or a class in [0, %d)", d.path(labelsFile), i, l, m.Classes)
		}
	}
	counts := []int{m.Train, m.Val, m.Test}
	for k, x := range []struct {
		file string
		mask *[]bool
	}{{trainFile, &d.train}, {valFile, &d.val}, {testFile, &d.test}} {
		if *x.mask, err = readArray(d, nil, fillBool, x.file, npy.Bool, m.Nodes); err != nil {
			return err
		}
		c := 0
		for i, b := range *x.mask {
			if b {
				c++
				if d.labels[i] < 0 {
					return fmt.Errorf("%s: vertex %d is unlabeled but in the split", d.path(x.file), i)
				}
			}
		}
		if c != counts[k] {
			return fmt.Errorf("%s: %d vertices, but %s says %d", d.path(x.file), c, MetaFile, counts[k])
		}
	}
	return nil
}
