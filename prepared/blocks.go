package prepared

import (
	"fmt"

	"scalegnn/grid"
	"scalegnn/npy"
	"scalegnn/spmm"
)

// blockRange is the position range of row (or column) block i.
func blockRange(m *Meta, i int) (lo, hi int) { return grid.Block(m.Nodes, m.Blocks, i) }

// blockOf is the block holding position k.
func blockOf(m *Meta, k int) int { return grid.Owner(m.Nodes, m.Blocks, k) }

// readBlock reads block (i, j) of orientation k: a CSR of the block's rows
// with column indices local to the block, checked against the metadata
// (shapes, nonzero count) and for structure (pointers, sorted in-range
// columns).
func (d *Dataset) readBlock(k, i, j int) (*spmm.CSR, error) {
	m := d.Meta
	r0, r1 := blockRange(m, i)
	c0, c1 := blockRange(m, j)
	nnz := int(m.BlockNNZ[k][i][j])
	f := blockFiles(k, i, j)
	a := &spmm.CSR{Rows: r1 - r0, Cols: c1 - c0}
	r, err := d.read(f[0], npy.Int64, r1-r0+1)
	if err != nil {
		return nil, err
	}
	if a.RowPtr, err = r.ReadAllInt64(); err != nil {
		return nil, err
	}
	if r, err = d.read(f[1], npy.Int32, nnz); err != nil {
		return nil, err
	}
	if a.ColIdx, err = r.ReadAllInt32(); err != nil {
		return nil, err
	}
	if r, err = d.read(f[2], npy.Float32, nnz); err != nil {
		return nil, err
	}
	if a.Val, err = r.ReadAllFloat32(); err != nil {
		return nil, err
	}
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("%s: block (%d, %d) of orientation %d: %v", d.dir, i, j, k, err)
	}
	return a, nil
}

// assemble returns the rows [r0, r1) and columns [c0, c1) of orientation
// k, reading one block at a time: the peak is the result plus one block.
func (d *Dataset) assemble(k, r0, r1, c0, c1 int) (*spmm.CSR, error) {
	m := d.Meta
	out := &spmm.CSR{Rows: r1 - r0, Cols: c1 - c0, RowPtr: make([]int64, r1-r0+1)}
	if r0 == r1 || c0 == c1 {
		return out, nil
	}
	// Reserve the expected size (overlapping blocks' nonzeros in proportion
	// to the overlap, plus 5%) so that appending rarely reallocates: the
	// result is the bulk of a rank's memory.
	var want float64
	for i := blockOf(m, r0); i <= blockOf(m, r1-1); i++ {
		b0, b1 := blockRange(m, i)
		for j := blockOf(m, c0); j <= blockOf(m, c1-1); j++ {
			cb0, cb1 := blockRange(m, j)
			frac := float64(min(r1, b1)-max(r0, b0)) / float64(b1-b0) * float64(min(c1, cb1)-max(c0, cb0)) / float64(cb1-cb0)
			want += frac * float64(m.BlockNNZ[k][i][j])
		}
	}
	out.ColIdx = make([]int32, 0, int(want*1.05)+1024)
	out.Val = make([]float32, 0, cap(out.ColIdx))
	for i := blockOf(m, r0); i <= blockOf(m, r1-1); i++ {
		b0, b1 := blockRange(m, i)
		lo, hi := max(r0, b0), min(r1, b1)
		var pieces []*spmm.CSR
		for j := blockOf(m, c0); j <= blockOf(m, c1-1); j++ {
			blk, err := d.readBlock(k, i, j)
			if err != nil {
				return nil, err
			}
			cb0, _ := blockRange(m, j)
			pieces = append(pieces, slice(blk, lo-b0, hi-b0, c0-cb0, c1-cb0, int32(cb0-c0)))
		}
		for r := lo; r < hi; r++ {
			for _, p := range pieces {
				q := r - lo
				out.ColIdx = append(out.ColIdx, p.ColIdx[p.RowPtr[q]:p.RowPtr[q+1]]...)
				out.Val = append(out.Val, p.Val[p.RowPtr[q]:p.RowPtr[q+1]]...)
			}
			out.RowPtr[r-r0+1] = int64(len(out.ColIdx))
		}
	}
	return out, nil
}

// slice returns rows [lo, hi) of a with the entries whose column is in
// [clo, chi), their columns shifted by shift.
func slice(a *spmm.CSR, lo, hi, clo, chi int, shift int32) *spmm.CSR {
	p := &spmm.CSR{Rows: hi - lo, RowPtr: make([]int64, hi-lo+1)}
	for r := lo; r < hi; r++ {
		for e := a.RowPtr[r]; e < a.RowPtr[r+1]; e++ {
			if c := int(a.ColIdx[e]); c >= clo && c < chi {
				p.ColIdx = append(p.ColIdx, a.ColIdx[e]+shift)
				p.Val = append(p.Val, a.Val[e])
			}
		}
		p.RowPtr[r-lo+1] = int64(len(p.ColIdx))
	}
	return p
}
