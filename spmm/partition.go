package spmm

import "sort"

// PartitionRows splits the rows of a into parts contiguous ranges of about
// equal cost and returns their parts+1 boundaries: range p is rows
// [bounds[p], bounds[p+1]). A row costs its nonzeros plus one (writing its
// output row costs something even when it is empty). Splitting by rows
// alone would hand one thread all the hubs of a power-law graph.
//
// Ranges may be empty when parts exceeds the rows or a single row outweighs
// a share. parts < 1 is treated as 1.
func PartitionRows(a *CSR, parts int) []int {
	return PartitionRowsInto(nil, a, parts)
}

// PartitionRowsInto is PartitionRows writing into bounds' storage when its
// capacity suffices (a device re-cuts a mini-batch's CSR every step
// without allocating); it returns the bounds.
func PartitionRowsInto(bounds []int, a *CSR, parts int) []int {
	if parts < 1 {
		parts = 1
	}
	if cap(bounds) < parts+1 {
		bounds = make([]int, parts+1)
	}
	bounds = bounds[:parts+1]
	bounds[0] = 0
	bounds[parts] = a.Rows
	// The cost of rows [0, r) is RowPtr[r] + r, non-decreasing in r for a
	// valid CSR, so each boundary is a binary search.
	total := a.RowPtr[a.Rows] + int64(a.Rows)
	for p := 1; p < parts; p++ {
		target := total * int64(p) / int64(parts)
		lo := bounds[p-1]
		bounds[p] = lo + sort.Search(a.Rows-lo, func(i int) bool {
			r := lo + i
			return a.RowPtr[r]+int64(r) >= target
		})
	}
	return bounds
}
