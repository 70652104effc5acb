package prepared

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"

	"scalegnn/grid"
	"scalegnn/internal/par"
	"scalegnn/npy"
	"scalegnn/spmm"
)

// blockRange is the position range of row (or column) block i.
func blockRange(m *Meta, i int) (lo, hi int) { return grid.Block(m.Nodes, m.Blocks, i) }

// blockOf is the block holding position k.
func blockOf(m *Meta, k int) int { return grid.Owner(m.Nodes, m.Blocks, k) }

// readArray reads the whole dataset file rel (dtype descr, the given shape)
// into dst, allocating it when too short, with read, and checks the file's
// digest: the one way an array comes out of the dataset.
func readArray[T int32 | int64 | float32 | bool](d *Dataset, dst []T, read func(*verified, []T) error, rel, descr string, shape ...int) ([]T, error) {
	v, err := d.open(rel, descr, shape...)
	if err != nil {
		return nil, err
	}
	n := v.Remaining()
	if cap(dst) < n {
		dst = make([]T, n)
	}
	dst = dst[:n]
	if err := read(v, dst); err != nil {
		err = v.damaged(err)
		v.f.Close()
		return nil, err
	}
	return dst, v.close()
}

func fillInt64(v *verified, x []int64) error    { return v.FillInt64(x) }
func fillInt32(v *verified, x []int32) error    { return v.FillInt32(x) }
func fillBool(v *verified, x []bool) error      { return v.FillBool(x) }
func fillFinite(v *verified, x []float32) error { return v.FillFiniteFloat32(x) }

// blockBuf holds one block while it is merged into a result; reused from
// block to block so that loading allocates nothing per block.
type blockBuf struct {
	ptr []int64
	idx []int32
	val []float32
}

// readIndptr reads the row pointers of block (i, j) of orientation k into
// dst and checks them against the metadata (start 0, non-decreasing, end
// at the block's nonzero count), so that they can be used before the rest
// of the block is read.
func (d *Dataset) readIndptr(k, i, j int, dst []int64) ([]int64, error) {
	m := d.Meta
	r0, r1 := blockRange(m, i)
	f := blockFiles(k, i, j)[0]
	ptr, err := readArray(d, dst, fillInt64, f, npy.Int64, r1-r0+1)
	if err != nil {
		return nil, err
	}
	nnz := m.BlockNNZ[k][i][j]
	if ptr[0] != 0 || ptr[len(ptr)-1] != nnz {
		return nil, fmt.Errorf("%s: row pointers run from %d to %d: expected 0 to %d (block_nnz in %s)", d.path(f), ptr[0], ptr[len(ptr)-1], nnz, MetaFile)
	}
	for r := range len(ptr) - 1 {
		if ptr[r+1] < ptr[r] {
			return nil, fmt.Errorf("%s: row pointer %d is %d, below the previous %d", d.path(f), r+1, ptr[r+1], ptr[r])
		}
	}
	return ptr, nil
}

// readEntries reads the column indices and values of block (i, j) of
// orientation k, whose row pointers ptr were read by readIndptr, into b
// and checks the block's structure (sorted, unique, in-range columns).
func (d *Dataset) readEntries(k, i, j int, ptr []int64, b *blockBuf) (*spmm.CSR, error) {
	m := d.Meta
	r0, r1 := blockRange(m, i)
	c0, c1 := blockRange(m, j)
	nnz := int(m.BlockNNZ[k][i][j])
	f := blockFiles(k, i, j)
	var err error
	if b.idx, err = readArray(d, b.idx, fillInt32, f[1], npy.Int32, nnz); err != nil {
		return nil, err
	}
	if b.val, err = readArray(d, b.val, fillFinite, f[2], npy.Float32, nnz); err != nil {
		var nf *npy.NonFiniteError
		if errors.As(err, &nf) && nf.Index < nnz {
			// Name the entry by its row (from the pointers) and column.
			r := sort.Search(r1-r0, func(r int) bool { return ptr[r+1] > int64(nf.Index) })
			c := int(b.idx[nf.Index])
			return nil, fmt.Errorf("%s: row %d, column %d of orientation %d (entry %d: row %d, column %d of block (%d, %d)) is %v: the adjacency values must be finite; prepare the dataset again from a clean source",
				nf.Name, r0+r, c0+c, k, nf.Index, r, c, i, j, nf.Value)
		}
		return nil, err
	}
	a := &spmm.CSR{Rows: r1 - r0, Cols: c1 - c0, RowPtr: ptr, ColIdx: b.idx, Val: b.val}
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("%s: block (%d, %d) of orientation %d: %v", d.dir, i, j, k, err)
	}
	return a, nil
}

// readBlock reads block (i, j) of orientation k whole into b: a CSR of the
// block's rows with column indices local to the block, checked against the
// metadata and for structure.
func (d *Dataset) readBlock(k, i, j int, b *blockBuf) (*spmm.CSR, error) {
	ptr, err := d.readIndptr(k, i, j, b.ptr)
	if err != nil {
		return nil, err
	}
	b.ptr = ptr
	return d.readEntries(k, i, j, ptr, b)
}

// overlap is the part of stored block (i, j) inside rows [r0, r1) and
// columns [c0, c1): block-local rows [lo, hi) and columns [clo, chi), and
// whether that is the whole block.
type overlap struct {
	i, j, lo, hi, clo, chi int
	allCols, whole         bool
}

// blocksIn lists the stored blocks overlapping rows [r0, r1) and columns
// [c0, c1), row block by row block (each inner slice is one row block, in
// column order).
func (d *Dataset) blocksIn(r0, r1, c0, c1 int) [][]overlap {
	m := d.Meta
	if r0 == r1 || c0 == c1 {
		return nil
	}
	var out [][]overlap
	for i := blockOf(m, r0); i <= blockOf(m, r1-1); i++ {
		b0, b1 := blockRange(m, i)
		var strip []overlap
		for j := blockOf(m, c0); j <= blockOf(m, c1-1); j++ {
			cb0, cb1 := blockRange(m, j)
			o := overlap{i: i, j: j, lo: max(r0, b0) - b0, hi: min(r1, b1) - b0, clo: max(c0, cb0) - cb0, chi: min(c1, cb1) - cb0}
			o.allCols = o.clo == 0 && o.chi == cb1-cb0
			o.whole = o.allCols && o.lo == 0 && o.hi == b1-b0
			strip = append(strip, o)
		}
		out = append(out, strip)
	}
	return out
}

// rowSpan is the part of block row r (block-local) with columns in the
// overlap: entries [s, e) of the block.
func (o overlap) rowSpan(a *spmm.CSR, r int) (s, e int64) {
	s, e = a.RowPtr[r], a.RowPtr[r+1]
	if o.allCols {
		return s, e
	}
	cols := a.ColIdx[s:e]
	lo, _ := slices.BinarySearch(cols, int32(o.clo))
	hi, _ := slices.BinarySearch(cols, int32(o.chi))
	return s + int64(lo), s + int64(hi)
}

// nnz counts the nonzeros of orientation k in rows [r0, r1) and columns
// [c0, c1): from the metadata for whole blocks, from the row pointers
// where a block's rows are cut, and from the entries where its columns
// are.
func (d *Dataset) nnz(k, r0, r1, c0, c1 int) (int64, error) {
	var n int64
	var b blockBuf
	for _, strip := range d.blocksIn(r0, r1, c0, c1) {
		for _, o := range strip {
			if o.whole {
				n += d.Meta.BlockNNZ[k][o.i][o.j]
				continue
			}
			ptr, err := d.readIndptr(k, o.i, o.j, b.ptr)
			if err != nil {
				return 0, err
			}
			b.ptr = ptr
			if o.allCols {
				n += ptr[o.hi] - ptr[o.lo]
				continue
			}
			a, err := d.readEntries(k, o.i, o.j, ptr, &b)
			if err != nil {
				return 0, err
			}
			for r := o.lo; r < o.hi; r++ {
				s, e := o.rowSpan(a, r)
				n += e - s
			}
		}
	}
	return n, nil
}

// assembleInto writes rows [r0, r1) and columns [c0, c1) of orientation k
// into dst, whose arrays the caller sized with nnz: every value goes from
// the file through one of two reused block buffers into its final place.
// For each row block it reads the blocks' row pointers first (to place
// every row of the result), then each block's entries, the next block's
// read while this one's are copied row by row to the result, the rows
// split over the threads. The peak is the result plus two blocks (plus
// the row pointers of one row block). At R-MAT scale 25 in 64 blocks a
// strip of every column took 2.6–3.0 s cold with one buffer and one
// thread, 1.5–1.7 s now (2 cores).
func (d *Dataset) assembleInto(dst *spmm.CSR, k, r0, r1, c0, c1 int) error {
	rows := r1 - r0
	dst.RowPtr[0] = 0
	for r := range rows {
		dst.RowPtr[r+1] = 0
	}
	var b blockBuf
	var bufs [2]blockBuf
	parts := min(runtime.GOMAXPROCS(0), max(1, (r1-r0)/4096))
	var ptrs [][]int64
	var next []int64
	for _, strip := range d.blocksIn(r0, r1, c0, c1) {
		b0, _ := blockRange(d.Meta, strip[0].i)
		lo, hi := strip[0].lo, strip[0].hi
		// out[0] is where the strip starts (the previous strips' total);
		// out[q+1] collects the length of the strip's row q, then the
		// running sum.
		out := dst.RowPtr[b0+lo-r0 : b0+hi-r0+1]
		for len(ptrs) < len(strip) {
			ptrs = append(ptrs, nil)
		}
		// Place the rows: count each row's entries over the blocks.
		for x, o := range strip {
			ptr, err := d.readIndptr(k, o.i, o.j, ptrs[x])
			if err != nil {
				return err
			}
			ptrs[x] = ptr
			if o.allCols {
				for q := range hi - lo {
					out[q+1] += ptr[lo+q+1] - ptr[lo+q]
				}
				continue
			}
			b.ptr = ptr
			a, err := d.readEntries(k, o.i, o.j, ptr, &b)
			if err != nil {
				return err
			}
			for q := range hi - lo {
				s, e := o.rowSpan(a, lo+q)
				out[q+1] += e - s
			}
		}
		for q := range hi - lo {
			out[q+1] += out[q]
		}
		if out[hi-lo] > int64(len(dst.ColIdx)) {
			return fmt.Errorf("%s: rows [%d, %d) of orientation %d have more than the %d nonzeros counted for them: the dataset changed while it was read", d.dir, r0, r1, k, len(dst.ColIdx))
		}
		next = append(next[:0], out[:hi-lo]...)
		// Copy each block's entries to their rows, reading the next
		// block's while this one's are copied (two buffers: the read of
		// block x+1 starts once block x's has arrived, so no read is in
		// flight when an error returns).
		pending := d.readEntriesAsync(k, strip[0], ptrs[0], &bufs[0])
		for x, o := range strip {
			got := <-pending
			if got.err != nil {
				return got.err
			}
			if x+1 < len(strip) {
				pending = d.readEntriesAsync(k, strip[x+1], ptrs[x+1], &bufs[(x+1)%2])
			}
			cb0, _ := blockRange(d.Meta, o.j)
			shift := int32(cb0 - c0)
			// The rows' places are disjoint: the threads split them.
			par.Do(parts, func(t int) {
				q0, q1 := grid.Block(len(next), parts, t)
				copyRows(dst, got.a, o, lo+q0, next[q0:q1], shift)
			})
		}
	}
	if dst.RowPtr[rows] != int64(len(dst.ColIdx)) {
		return fmt.Errorf("%s: rows [%d, %d) of orientation %d have %d nonzeros, not the %d counted for them: the dataset changed while it was read", d.dir, r0, r1, k, dst.RowPtr[rows], len(dst.ColIdx))
	}
	return nil
}

// entries is what readEntriesAsync delivers.
type entries struct {
	a   *spmm.CSR
	err error
}

// readEntriesAsync is readEntries of overlap o's block into b, in a
// goroutine: the result arrives on the channel.
func (d *Dataset) readEntriesAsync(k int, o overlap, ptr []int64, b *blockBuf) <-chan entries {
	ch := make(chan entries, 1)
	go func() {
		a, err := d.readEntries(k, o.i, o.j, ptr, b)
		ch <- entries{a, err}
	}()
	return ch
}

// copyRows copies the entries of block a inside overlap o to their rows of
// dst: block row lo+q's at next[q], which it advances, with the columns
// shifted by shift. A strip of R-MAT scale 25 in 64 blocks averages half
// an entry a block row, so the whole-columns case reads the row pointers
// directly and skips empty rows.
func copyRows(dst, a *spmm.CSR, o overlap, lo int, next []int64, shift int32) {
	if o.allCols {
		ptr := a.RowPtr[lo : lo+len(next)+1]
		for q := range next {
			s, e := ptr[q], ptr[q+1]
			if s == e {
				continue
			}
			p := next[q]
			idx := dst.ColIdx[p : p+e-s]
			for t, c := range a.ColIdx[s:e] {
				idx[t] = c + shift
			}
			copy(dst.Val[p:p+e-s], a.Val[s:e])
			next[q] = p + e - s
		}
		return
	}
	for q := range next {
		s, e := o.rowSpan(a, lo+q)
		p := next[q]
		for t, c := range a.ColIdx[s:e] {
			dst.ColIdx[p+int64(t)] = c + shift
		}
		copy(dst.Val[p:p+e-s], a.Val[s:e])
		next[q] = p + e - s
	}
}
