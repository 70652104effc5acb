package permute

import (
	"fmt"

	"scalegnn/spmm"
)

// Stats summarises the nonzeros per block when the rows and the columns of
// a matrix are cut into contiguous near-equal blocks (the first n mod k
// blocks one longer, as package grid splits a dimension).
type Stats struct {
	RowBlocks, ColBlocks int
	// Max, Min and Mean are nonzeros per block.
	Max, Min int64
	Mean     float64
	// Imbalance is Max/Mean, the statistic of Plexus Table 3: the slowest
	// rank's SpMM work relative to a perfect split. It is 1 for an empty
	// matrix.
	Imbalance float64
}

func (s Stats) String() string {
	return fmt.Sprintf("%d×%d blocks: max %d, mean %.1f, min %d, max/mean %.3f",
		s.RowBlocks, s.ColBlocks, s.Max, s.Mean, s.Min, s.Imbalance)
}

// Balance counts the nonzeros of a in each of rowBlocks × colBlocks
// contiguous blocks, in O(nnz + rows + cols). Block counts below 1 panic
// with a UsageError.
func Balance(a *spmm.CSR, rowBlocks, colBlocks int) Stats {
	return BalancePermuted(a, nil, nil, rowBlocks, colBlocks)
}

// BalancePermuted returns Balance(Permute(a, rowPerm, colPerm), rowBlocks,
// colBlocks) without building the permuted matrix: each entry (r, c) is
// counted in the block of its new position (Inverse(rowPerm)[r],
// Inverse(colPerm)[c]). O(nnz) and no sorting, so it can rate schemes and
// seeds on a large graph cheaply.
func BalancePermuted(a *spmm.CSR, rowPerm, colPerm []int32, rowBlocks, colBlocks int) Stats {
	if rowBlocks < 1 || colBlocks < 1 {
		usage("Balance: %d×%d blocks, want at least 1×1", rowBlocks, colBlocks)
	}
	if (rowPerm != nil && len(rowPerm) != a.Rows) || (colPerm != nil && len(colPerm) != a.Cols) {
		usage("BalancePermuted: permutations of %d and %d for a %d×%d matrix", len(rowPerm), len(colPerm), a.Rows, a.Cols)
	}
	rowBlock := blockOf(a.Rows, rowBlocks, rowPerm)
	colBlock := blockOf(a.Cols, colBlocks, colPerm)
	// Per-goroutine counts summed at the end: no atomics in the O(nnz) loop.
	nb := rowBlocks * colBlocks
	partial := parallelRows(a.Rows, func(lo, hi int, cnt *[]int64) {
		if *cnt == nil {
			*cnt = make([]int64, nb)
		}
		c := *cnt
		for r := lo; r < hi; r++ {
			base := int(rowBlock[r]) * colBlocks
			for p := a.RowPtr[r]; p < a.RowPtr[r+1]; p++ {
				c[base+int(colBlock[a.ColIdx[p]])]++
			}
		}
	})
	total := make([]int64, nb)
	for _, cnt := range partial {
		for k, x := range *cnt {
			total[k] += x
		}
	}
	s := Stats{RowBlocks: rowBlocks, ColBlocks: colBlocks, Max: total[0], Min: total[0]}
	var sum int64
	for _, x := range total {
		s.Max, s.Min = max(s.Max, x), min(s.Min, x)
		sum += x
	}
	s.Mean = float64(sum) / float64(nb)
	s.Imbalance = 1
	if sum > 0 {
		s.Imbalance = float64(s.Max) / s.Mean
	}
	return s
}

// blockOf returns, for each original index v of a dimension of length n
// cut into k blocks, the block of its position (perm⁻¹[v], or v for a nil
// perm). The first n mod k blocks have ⌈n/k⌉ entries, the rest ⌊n/k⌋.
func blockOf(n, k int, perm []int32) []int32 {
	q, r := n/k, n%k
	owner := func(i int) int32 {
		if i < r*(q+1) {
			return int32(i / (q + 1))
		}
		return int32(r + (i-r*(q+1))/q)
	}
	b := make([]int32, n)
	if perm == nil {
		for i := range b {
			b[i] = owner(i)
		}
		return b
	}
	checkPerm(perm)
	for i, v := range perm {
		b[v] = owner(i)
	}
	return b
}

// BalanceReport returns the block statistics of a over a blocks × blocks
// split for the schemes None, Single and Double (indexed by Scheme) drawn
// from seed. Pass the matrix that is actually sharded, normally the
// normalised adjacency with its self loops: the diagonal is what a single
// permutation cannot spread. For a symmetric a, Double's odd-layer shard
// A[P2][:, P1] is the transpose of the even one and has the same
// statistics, so the even one is reported.
func BalanceReport(a *spmm.CSR, blocks int, seed uint64) [3]Stats {
	if a.Rows != a.Cols {
		usage("BalanceReport: %d×%d matrix is not square", a.Rows, a.Cols)
	}
	var out [3]Stats
	for _, s := range []Scheme{None, Single, Double} {
		p := New(a.Rows, s, seed)
		out[s] = BalancePermuted(a, p.P1, p.P2, blocks, blocks)
	}
	return out
}
