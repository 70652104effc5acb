package prepared

import (
	"scalegnn/grid"
	"scalegnn/permute"
)

// MetaBalance returns the nonzero balance over the stored S×S blocks of
// orientation 0, from the metadata alone.
func MetaBalance(m *Meta) permute.Stats {
	s := permute.Stats{RowBlocks: m.Blocks, ColBlocks: m.Blocks}
	return statsOf(s, m.BlockNNZ[0])
}

// statsOf fills max, min, mean and max/mean from per-block counts.
func statsOf(s permute.Stats, counts [][]int64) permute.Stats {
	var sum int64
	first := true
	nb := 0
	for _, row := range counts {
		for _, x := range row {
			if first {
				s.Max, s.Min, first = x, x, false
			}
			s.Max, s.Min = max(s.Max, x), min(s.Min, x)
			sum += x
			nb++
		}
	}
	s.Mean = float64(sum) / float64(max(nb, 1))
	s.Imbalance = 1
	if sum > 0 {
		s.Imbalance = float64(s.Max) / s.Mean
	}
	return s
}

// Balance returns the nonzero balance of the adjacency shard with rows in
// order rowOrder (0: Â[p1][:, p2], 1: Â[p2][:, p1]) when its rows are cut
// into rowParts and its columns into colParts contiguous blocks, as a grid
// cuts them. It streams every stored block once (verifying each), holding
// one block at a time.
func (d *Dataset) Balance(rowOrder, rowParts, colParts int) (permute.Stats, error) {
	if rowParts < 1 || colParts < 1 || rowOrder < 0 || rowOrder > 1 {
		panic("prepared: Balance: parts must be >= 1 and rowOrder 0 or 1")
	}
	m := d.Meta
	k, transposed := 0, false
	if rowOrder == 1 && d.double() {
		if m.Orientations == 2 {
			k = 1
		} else {
			transposed = true // count Â[p1][:, p2] with the parts swapped
			rowParts, colParts = colParts, rowParts
		}
	}
	n := m.Nodes
	counts := make([][]int64, rowParts)
	for i := range counts {
		counts[i] = make([]int64, colParts)
	}
	colPart := make([]int32, n)
	for c := range n {
		colPart[c] = int32(ownerOf(n, colParts, c))
	}
	var buf blockBuf
	for i := range m.Blocks {
		r0, _ := blockRange(m, i)
		for j := range m.Blocks {
			c0, _ := blockRange(m, j)
			a, err := d.readBlock(k, i, j, &buf)
			if err != nil {
				return permute.Stats{}, err
			}
			for r := range a.Rows {
				row := counts[ownerOf(n, rowParts, r0+r)]
				for e := a.RowPtr[r]; e < a.RowPtr[r+1]; e++ {
					row[colPart[c0+int(a.ColIdx[e])]]++
				}
			}
		}
	}
	if transposed {
		t := make([][]int64, colParts)
		for j := range t {
			t[j] = make([]int64, rowParts)
			for i := range rowParts {
				t[j][i] = counts[i][j]
			}
		}
		counts, rowParts, colParts = t, colParts, rowParts
	}
	return statsOf(permute.Stats{RowBlocks: rowParts, ColBlocks: colParts}, counts), nil
}

func ownerOf(n, parts, k int) int { return grid.Owner(n, parts, k) }
