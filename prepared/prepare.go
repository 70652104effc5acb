package prepared

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"scalegnn/grid"
	"scalegnn/npy"
	"scalegnn/permute"
	"scalegnn/spmm"
)

// Options controls Prepare.
type Options struct {
	// Blocks is S, the number of row and column blocks of the stored
	// adjacency and of row blocks of the features, in [1, min(N, 256)].
	// A rank reads the blocks that overlap its ranges, so S need not match
	// any grid; larger S means less read beyond a rank's share.
	Blocks int
	// Scheme and Seed are the permutation, as in permute.New.
	Scheme permute.Scheme
	Seed   int64
	// FeatureDType is the element type of the stored features: "" or
	// FeaturesFloat32, or FeaturesBF16 (bfloat16 as uint16, each value
	// rounded once by spmm.ToBF16; half the bytes of float32).
	FeatureDType string
	// Symmetrize adds the reverse of every edge (A + Aᵀ, duplicates merged).
	Symmetrize bool
	// Force replaces an existing prepared dataset at the output path. A
	// directory that is not a prepared dataset is never replaced.
	Force bool
	// Progress receives progress lines; nil is silent.
	Progress io.Writer
}

// Prepare reads in and writes the prepared dataset directory out. See the
// package documentation for the layout and the memory bound. The dataset
// is written into a temporary sibling directory, renamed to out only when
// complete, so out never holds a half-written dataset.
func Prepare(in Input, out string, opt Options) (*Meta, error) {
	hdr := in.Header()
	switch {
	case hdr.N < 1 || hdr.N > math.MaxInt32:
		return nil, fmt.Errorf("prepare: %d vertices: expected [1, 2^31-1]", hdr.N)
	case hdr.F < 1:
		return nil, fmt.Errorf("prepare: %d features: expected >= 1", hdr.F)
	case hdr.Classes < 1:
		return nil, fmt.Errorf("prepare: %d classes: expected >= 1", hdr.Classes)
	case opt.Blocks < 1 || opt.Blocks > MaxBlocks || opt.Blocks > hdr.N:
		return nil, fmt.Errorf("prepare: -blocks %d: expected an integer in [1, %d] (and at most the %d vertices)", opt.Blocks, MaxBlocks, hdr.N)
	}
	dt, err := ParseFeatureDType(opt.FeatureDType)
	if err != nil {
		return nil, fmt.Errorf("prepare: -dtype: %v", err)
	}
	opt.FeatureDType = dt
	out = filepath.Clean(out)
	replace := false
	if _, err := os.Lstat(out); err == nil {
		if !opt.Force {
			return nil, fmt.Errorf("prepare: %s already exists: choose another output directory, or pass -force to replace a prepared dataset", out)
		}
		if _, err := ReadMeta(out); err != nil {
			return nil, fmt.Errorf("prepare: %s already exists and is not a valid prepared dataset (%v): refusing to replace it even with -force", out, err)
		}
		replace = true
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	removed, err := removeStalePartials(out, opt.Force)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	prog := newProgress(opt.Progress)
	for _, p := range removed {
		prog.printf("removed %s, left by a prepare that was stopped", p)
	}
	tmp, err := makePartial(out)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	w := &writer{opt: opt, hdr: hdr, tmp: tmp, work: filepath.Join(tmp, ".work"), prog: prog}
	if err := os.Mkdir(w.work, 0o755); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	if err := w.run(in); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(w.work); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	if err := os.Remove(filepath.Join(tmp, ownerFile)); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	data, err := w.meta.encode()
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, MetaFile), data, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("prepare: writing %s: %w", MetaFile, err)
	}
	if replace {
		old := tmp + ".old"
		if err := os.Rename(out, old); err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
		if err := os.Rename(tmp, out); err != nil {
			os.Rename(old, out)
			return nil, fmt.Errorf("prepare: %w", err)
		}
		os.RemoveAll(old)
	} else if err := os.Rename(tmp, out); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	done = true
	w.prog.printf("wrote %s: %d vertices, %d nonzeros, %d features, %dx%d blocks, %d files, in %.1fs",
		out, w.meta.Nodes, w.meta.NNZ, w.meta.Features, w.meta.Blocks, w.meta.Blocks, len(w.meta.Files)+1, time.Since(w.prog.start).Seconds())
	return w.meta, nil
}

// writer holds the state of one Prepare.
type writer struct {
	opt       Options
	hdr       InputHeader
	tmp, work string
	meta      *Meta
	prog      *progress
	perms     *permute.Perms
}

func (w *writer) run(in Input) error {
	h, opt := w.hdr, w.opt
	n, s := h.N, opt.Blocks
	symmetric := h.Symmetric || opt.Symmetrize
	w.meta = &Meta{
		Format: Format, Version: Version, Name: h.Name, Nodes: n, Features: h.F, FeatureDType: opt.FeatureDType, Classes: h.Classes,
		Blocks: s, Symmetric: symmetric, Weighted: h.Weighted,
		Orientations: orientations(opt.Scheme, symmetric, h.Weighted),
		Permute:      PermuteMeta{Scheme: opt.Scheme, Seed: opt.Seed},
		Source:       h.Source,
	}
	w.perms = permute.New(n, opt.Scheme, uint64(opt.Seed))
	if err := w.writeVertices(in); err != nil {
		return err
	}
	if err := w.writeAdjacency(in); err != nil {
		return err
	}
	return w.writeFeatures(in)
}

// writeVertices writes the orders, the labels and the masks.
func (w *writer) writeVertices(in Input) error {
	n := w.hdr.N
	orders := [][]int32{w.perms.P1}
	if w.opt.Scheme == permute.Double {
		orders = append(orders, w.perms.P2)
	}
	for k, p := range orders {
		if err := w.writeNPY(orderFile(k), npy.Int32, []int{n}, func(nw *npy.Writer) error { return nw.WriteInt32(p) }); err != nil {
			return err
		}
	}
	labels, tr, va, te, err := in.Vertices()
	if err != nil {
		return err
	}
	if len(labels) != n || len(tr) != n || len(va) != n || len(te) != n {
		return fmt.Errorf("prepare: %s: %d labels and masks of %d/%d/%d for %d vertices", w.hdr.Name, len(labels), len(tr), len(va), len(te), n)
	}
	for i, l := range labels {
		if l < -1 || int(l) >= w.hdr.Classes {
			return fmt.Errorf("prepare: %s: label of vertex %d is %d: expected -1 or a class in [0, %d)", w.hdr.Name, i, l, w.hdr.Classes)
		}
	}
	if err := checkSplit(labels, tr, va, te, [3]string{"train split", "validation split", "test split"}); err != nil {
		return err
	}
	if err := w.writeNPY(labelsFile, npy.Int32, []int{n}, func(nw *npy.Writer) error { return nw.WriteInt32(labels) }); err != nil {
		return err
	}
	for _, m := range []struct {
		file string
		mask []bool
		cnt  *int
	}{{trainFile, tr, &w.meta.Train}, {valFile, va, &w.meta.Val}, {testFile, te, &w.meta.Test}} {
		for _, b := range m.mask {
			if b {
				*m.cnt++
			}
		}
		if err := w.writeNPY(m.file, npy.Bool, []int{n}, func(nw *npy.Writer) error { return nw.WriteBool(m.mask) }); err != nil {
			return err
		}
	}
	return nil
}

// writeAdjacency buckets the edges into row strips, computes the degrees
// and writes the normalised blocks of every orientation.
func (w *writer) writeAdjacency(in Input) error {
	h, opt, p := w.hdr, w.opt, w.perms
	n, s := h.N, opt.Blocks
	mirror := opt.Symmetrize && !h.Symmetric
	// Orientation k has rows in order k and columns in order 1-k.
	rowPos := [2][]int32{p.Inv1, p.Inv2}
	st := make([]*strips, w.meta.Orientations)
	for k := range st {
		var err error
		if st[k], err = newStrips(w.work, fmt.Sprintf("adj%d-", k), s, h.Weighted); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		defer st[k].close()
	}
	var read int64
	add := func(u, v int32, wt float32) error {
		for k, t := range st {
			r := rowPos[k][u]
			if err := t.add(grid.Owner(n, s, int(r)), r, v, wt); err != nil {
				return fmt.Errorf("prepare: writing temporary file: %w", err)
			}
		}
		return nil
	}
	err := in.Edges(func(us, vs []int32, ws []float32) error {
		if len(vs) != len(us) || (ws != nil && len(ws) != len(us)) || (ws != nil) != h.Weighted {
			panic("prepared: Input.Edges batch of mismatched slices")
		}
		for e, u := range us {
			v := vs[e]
			if u < 0 || int(u) >= n || v < 0 || int(v) >= n {
				return fmt.Errorf("prepare: %s: edge (%d, %d) outside [0, %d)", h.Name, u, v, n)
			}
			if u == v {
				continue // GCN normalisation adds every self loop with weight 1
			}
			wt := float32(1)
			if ws != nil {
				wt = ws[e]
			}
			if err := add(u, v, wt); err != nil {
				return err
			}
			if mirror {
				if err := add(v, u, wt); err != nil {
					return err
				}
			}
		}
		read += int64(len(us))
		w.prog.count("read edges", read)
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range st {
		if err := t.finish(); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
	}
	w.prog.printf("read %d edges", read)

	// Degrees of A + I, summed like dataset.NormalizeGCN: 1, then the
	// row's weights in increasing column (vertex) order.
	dinv := make([]float64, n)
	for i := range dinv {
		dinv[i] = 1
	}
	rowVert := [2][]int32{p.P1, p.P2}
	for i := range s {
		keys, ws, err := st[0].read(i)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		keys, ws = sortDedupe(keys, ws)
		for a := 0; a < len(keys); {
			row := int32(keys[a] >> 32)
			d := 1.0
			b := a
			for ; b < len(keys) && int32(keys[b]>>32) == row; b++ {
				if ws != nil {
					d += float64(ws[b])
				} else {
					d++
				}
			}
			dinv[rowVert[0][row]] = d
			a = b
		}
		w.prog.percent("degrees", i+1, s)
	}
	for v, d := range dinv {
		if d > 0 {
			dinv[v] = 1 / math.Sqrt(d)
		} else {
			dinv[v] = 0
		}
	}

	w.meta.BlockNNZ = make([][][]int64, len(st))
	colPos := [2][]int32{p.Inv2, p.Inv1}
	colVert := [2][]int32{p.P2, p.P1}
	for k, t := range st {
		w.meta.BlockNNZ[k] = make([][]int64, s)
		var total int64
		for i := range s {
			keys, ws, err := t.read(i)
			if err != nil {
				return fmt.Errorf("prepare: %w", err)
			}
			for e, key := range keys {
				keys[e] = key&^(1<<32-1) | uint64(uint32(colPos[k][int32(uint32(key))]))
			}
			keys, ws = sortDedupe(keys, ws)
			nnz, err := w.writeStrip(k, i, keys, ws, dinv, rowVert[k], colPos[k], colVert[k])
			if err != nil {
				return err
			}
			total += nnz
			w.prog.percent(fmt.Sprintf("adjacency blocks (orientation %d)", k), i+1, s)
		}
		if k == 0 {
			w.meta.NNZ = total
			w.meta.Edges = total - int64(n)
		}
	}
	return nil
}

// writeStrip writes the S blocks of row strip i of orientation k from its
// sorted, deduplicated entries (keys row<<32 | column position), adding the
// diagonal and normalising. It returns the strip's nonzeros.
func (w *writer) writeStrip(k, i int, keys []uint64, ws []float32, dinv []float64, rowVert, colPos, colVert []int32) (int64, error) {
	n, s := w.hdr.N, w.opt.Blocks
	r0, r1 := grid.Block(n, s, i)
	rows := r1 - r0
	// Count each block's entries, the diagonal included.
	cnt := make([]int, s)
	for _, key := range keys {
		cnt[grid.Owner(n, s, int(uint32(key)))]++
	}
	for r := r0; r < r1; r++ {
		cnt[grid.Owner(n, s, int(colPos[rowVert[r]]))]++
	}
	type block struct {
		c0     int
		rowPtr []int64
		col    []int32
		val    []float32
	}
	bs := make([]block, s)
	for j := range bs {
		c0, _ := grid.Block(n, s, j)
		bs[j] = block{c0: c0, rowPtr: make([]int64, 1, rows+1), col: make([]int32, 0, cnt[j]), val: make([]float32, 0, cnt[j])}
	}
	put := func(c int32, a float64, du float64) {
		b := &bs[grid.Owner(n, s, int(c))]
		b.col = append(b.col, c-int32(b.c0))
		b.val = append(b.val, float32(a*du*dinv[colVert[c]]))
	}
	e := 0
	for r := r0; r < r1; r++ {
		u := rowVert[r]
		du := dinv[u]
		diag := colPos[u]
		self := false
		for ; e < len(keys) && int(keys[e]>>32) == r; e++ {
			c := int32(uint32(keys[e]))
			if !self && c > diag {
				put(diag, 1, du)
				self = true
			}
			a := 1.0
			if ws != nil {
				a = float64(ws[e])
			}
			put(c, a, du)
		}
		if !self {
			put(diag, 1, du)
		}
		for j := range bs {
			bs[j].rowPtr = append(bs[j].rowPtr, int64(len(bs[j].col)))
		}
	}
	if e != len(keys) {
		panic("prepared: strip entries outside the strip's rows")
	}
	var total int64
	w.meta.BlockNNZ[k][i] = make([]int64, s)
	for j, b := range bs {
		f := blockFiles(k, i, j)
		nnz := len(b.col)
		if err := w.writeNPY(f[0], npy.Int64, []int{rows + 1}, func(nw *npy.Writer) error { return nw.WriteInt64(b.rowPtr) }); err != nil {
			return 0, err
		}
		if err := w.writeNPY(f[1], npy.Int32, []int{nnz}, func(nw *npy.Writer) error { return nw.WriteInt32(b.col) }); err != nil {
			return 0, err
		}
		if err := w.writeNPY(f[2], npy.Float32, []int{nnz}, func(nw *npy.Writer) error { return nw.WriteFloat32(b.val) }); err != nil {
			return 0, err
		}
		w.meta.BlockNNZ[k][i][j] = int64(nnz)
		total += int64(nnz)
		bs[j] = block{}
	}
	return total, nil
}

// sortDedupe sorts the keys (with their weights) and merges equal keys,
// keeping the largest weight.
func sortDedupe(keys []uint64, ws []float32) ([]uint64, []float32) {
	if ws == nil {
		slices.Sort(keys)
		return slices.Compact(keys), nil
	}
	type rec struct {
		k uint64
		w float32
	}
	rs := make([]rec, len(keys))
	for i := range rs {
		rs[i] = rec{keys[i], ws[i]}
	}
	slices.SortFunc(rs, func(a, b rec) int {
		switch {
		case a.k < b.k:
			return -1
		case a.k > b.k:
			return 1
		}
		return 0
	})
	m := 0
	for i, r := range rs {
		if i > 0 && r.k == keys[m-1] {
			ws[m-1] = max(ws[m-1], r.w)
			continue
		}
		keys[m], ws[m] = r.k, r.w
		m++
	}
	return keys[:m], ws[:m]
}

// writeFeatures buckets the feature rows into row blocks of order 1 (p2)
// and writes each block.
func (w *writer) writeFeatures(in Input) error {
	n, s, f := w.hdr.N, w.opt.Blocks, w.hdr.F
	inv := w.perms.Inv2
	files := make([]*os.File, s)
	bufs := make([]*outBuf, s)
	for i := range s {
		fh, err := os.Create(filepath.Join(w.work, fmt.Sprintf("feat-%d.bin", i)))
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		defer fh.Close()
		files[i], bufs[i] = fh, newOutBuf(fh)
	}
	next := 0
	err := in.Features(func(v0 int, rows []float32) error {
		if v0 != next || len(rows)%f != 0 || v0+len(rows)/f > n {
			return fmt.Errorf("prepare: %s: feature rows from vertex %d (%d values) after %d rows: expected whole rows of %d in vertex order", w.hdr.Name, v0, len(rows), next, f)
		}
		if err := checkFinite(rows, f, v0, w.hdr.Name); err != nil {
			return err
		}
		for r := 0; r < len(rows)/f; r++ {
			pos := inv[v0+r]
			if err := bufs[grid.Owner(n, s, int(pos))].row(pos, rows[r*f:(r+1)*f]); err != nil {
				return fmt.Errorf("prepare: writing temporary file: %w", err)
			}
		}
		next = v0 + len(rows)/f
		w.prog.percent("read features", next, n)
		return nil
	})
	if err != nil {
		return err
	}
	if next != n {
		return fmt.Errorf("prepare: %s: features for %d vertices: expected %d", w.hdr.Name, next, n)
	}
	for i := range s {
		if err := bufs[i].flush(); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		r0, r1 := grid.Block(n, s, i)
		x := make([]float32, (r1-r0)*f)
		if err := readFeatureStrip(files[i], r0, r1, f, x); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		if err := w.writeNPY(featureFile(i), w.meta.featureDescr(), []int{r1 - r0, f}, func(nw *npy.Writer) error {
			if w.meta.BF16Features() {
				return writeBF16(nw, x)
			}
			return nw.WriteFloat32(x)
		}); err != nil {
			return err
		}
		w.prog.percent("feature blocks", i+1, s)
	}
	return nil
}

var errFeatureStrip = errors.New("feature strip does not hold every row once")

// writeBF16 writes x rounded to bfloat16 (spmm.ToBF16, the one rounding
// rule) to a Uint16 array, a piece at a time.
func writeBF16(nw *npy.Writer, x []float32) error {
	h := make([]uint16, min(len(x), 1<<16))
	for len(x) > 0 {
		k := min(len(x), len(h))
		for j, v := range x[:k] {
			h[j] = spmm.ToBF16(v)
		}
		if err := nw.WriteUint16(h[:k]); err != nil {
			return err
		}
		x = x[k:]
	}
	return nil
}
