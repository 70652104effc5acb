package cagnet

import "scalegnn/spmm"

// subBlock returns a[r0:r1, c0:c1] with column indices relative to c0.
func subBlock(a *spmm.CSR, r0, r1, c0, c1 int) *spmm.CSR {
	b := &spmm.CSR{Rows: r1 - r0, Cols: c1 - c0, RowPtr: make([]int64, r1-r0+1)}
	for i := r0; i < r1; i++ {
		for e := a.RowPtr[i]; e < a.RowPtr[i+1]; e++ {
			if j := int(a.ColIdx[e]); j >= c0 && j < c1 {
				b.ColIdx = append(b.ColIdx, int32(j-c0))
				b.Val = append(b.Val, a.Val[e])
			}
		}
		b.RowPtr[i-r0+1] = int64(len(b.ColIdx))
	}
	return b
}
