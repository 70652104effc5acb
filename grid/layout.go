package grid

import (
	"fmt"
	"sort"
)

// Layout describes how a Rows×Cols matrix is distributed over the 3D grid of
// a replica: rows cut into blocks over RowAxis, columns over ColAxis, and
// every block replicated over the third axis.
type Layout struct {
	Rows, Cols       int
	RowAxis, ColAxis Axis
	// RowBounds, when set, are the Size(RowAxis)+1 row block boundaries
	// (block i is rows [RowBounds[i], RowBounds[i+1])) in place of the even
	// split of Block: a mini-batch keeps the rows of a sampled graph where
	// the full graph's blocks put them, so its blocks are uneven.
	RowBounds []int
}

// rowBlock returns the rows of block i of l.
func (l Layout) rowBlock(g *Grid, i int) (lo, hi int) {
	if l.RowBounds != nil {
		return l.RowBounds[i], l.RowBounds[i+1]
	}
	return Block(l.Rows, g.Size(l.RowAxis), i)
}

// rowOwner returns the block of l that holds row k.
func (l Layout) rowOwner(g *Grid, k int) int {
	if l.RowBounds != nil {
		// The last boundary not above k; empty blocks are skipped.
		return sort.Search(len(l.RowBounds)-1, func(i int) bool { return l.RowBounds[i+1] > k })
	}
	return Owner(l.Rows, g.Size(l.RowAxis), k)
}

// Replica returns the axis over which the blocks are replicated.
func (l Layout) Replica() Axis { return Third(l.RowAxis, l.ColAxis) }

func (l Layout) String() string {
	return fmt.Sprintf("%dx%d[rows %v, cols %v]", l.Rows, l.Cols, l.RowAxis, l.ColAxis)
}

// Local returns this rank's block of l: global rows [r0, r1), columns [c0, c1).
func (g *Grid) Local(l Layout) (r0, r1, c0, c1 int) {
	if l.RowBounds != nil && (len(l.RowBounds) != g.Size(l.RowAxis)+1 || l.RowBounds[0] != 0 || l.RowBounds[len(l.RowBounds)-1] != l.Rows) {
		panic(fmt.Sprintf("grid: layout %v has row bounds %v", l, l.RowBounds))
	}
	r0, r1 = l.rowBlock(g, g.Coord(l.RowAxis))
	c0, c1 = g.Range(l.Cols, l.ColAxis)
	return
}
