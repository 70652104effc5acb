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

// Redistribute moves a matrix from layout srcL to layout dstL inside this
// rank's replica with one alltoallv over the Cube communicator. src is this
// rank's srcL block (row-major, tightly packed) and dst receives its dstL
// block. Rows may be reordered on the way: the row at global position i in
// the source is stored at position rowMap[i] in the destination (nil means
// the identity); double permutation needs this because consecutive layers
// keep their rows in different vertex orders.
//
// Each destination block is served by exactly one source replica: the one
// whose coordinate on the source's replica axis equals the destination
// rank's coordinate on that axis, which spreads the sending over all
// replicas instead of one.
func (g *Grid) Redistribute(dst []float32, dstL Layout, src []float32, srcL Layout, rowMap []int32) error {
	if srcL.Rows != dstL.Rows || srcL.Cols != dstL.Cols {
		panic(fmt.Sprintf("grid: Redistribute from %v to %v changes the shape", srcL, dstL))
	}
	if rowMap != nil && len(rowMap) != srcL.Rows {
		panic(fmt.Sprintf("grid: Redistribute row map of length %d for %d rows", len(rowMap), srcL.Rows))
	}
	sr0, sr1, sc0, sc1 := g.Local(srcL)
	dr0, dr1, dc0, dc1 := g.Local(dstL)
	if len(src) != (sr1-sr0)*(sc1-sc0) || len(dst) != (dr1-dr0)*(dc1-dc0) {
		panic(fmt.Sprintf("grid: Redistribute buffers %d, %d for blocks %dx%d, %dx%d",
			len(src), len(dst), sr1-sr0, sc1-sc0, dr1-dr0, dc1-dc0))
	}
	dstPos := func(i int) int {
		if rowMap == nil {
			return i
		}
		return int(rowMap[i])
	}
	rep := srcL.Replica()
	n3 := g.X * g.Y * g.Z

	// Source side: local rows sorted by destination position, so the rows
	// bound for one destination row block form one run.
	type rowRef struct{ pos, local int }
	out := make([]rowRef, sr1-sr0)
	for i := range out {
		out[i] = rowRef{dstPos(sr0 + i), i}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].pos < out[b].pos })

	sendCounts := make([]int, n3)
	recvCounts := make([]int, n3)
	coords := func(t int) [3]int {
		_, x, y, z := g.Shape.Coords(t)
		return [3]int{x, y, z}
	}
	me := [3]int{g.CX, g.CY, g.CZ}
	sendRuns := make([][2]int, n3) // [first, last) into out
	sendCols := make([][2]int, n3)
	for t := 0; t < n3; t++ {
		tc := coords(t)
		if tc[rep] != me[rep] {
			continue
		}
		tr0, tr1 := dstL.rowBlock(g, tc[dstL.RowAxis])
		tc0, tc1 := Block(dstL.Cols, g.Size(dstL.ColAxis), tc[dstL.ColAxis])
		c0, c1 := max(tc0, sc0), min(tc1, sc1)
		if c1 <= c0 {
			continue
		}
		first := sort.Search(len(out), func(k int) bool { return out[k].pos >= tr0 })
		last := sort.Search(len(out), func(k int) bool { return out[k].pos >= tr1 })
		sendRuns[t] = [2]int{first, last}
		sendCols[t] = [2]int{c0, c1}
		sendCounts[t] = (last - first) * (c1 - c0)
	}
	sendBuf := make([]float32, 0, sum(sendCounts))
	sw := sc1 - sc0
	for t := 0; t < n3; t++ {
		if sendCounts[t] == 0 {
			continue
		}
		c0, c1 := sendCols[t][0]-sc0, sendCols[t][1]-sc0
		for _, r := range out[sendRuns[t][0]:sendRuns[t][1]] {
			sendBuf = append(sendBuf, src[r.local*sw+c0:r.local*sw+c1]...)
		}
	}

	// Destination side: for each of my rows, the source rank that holds it.
	srcPos := make([]int, dr1-dr0)
	if rowMap == nil {
		for j := range srcPos {
			srcPos[j] = dr0 + j
		}
	} else {
		inv := make([]int, dstL.Rows)
		for i, p := range rowMap {
			inv[p] = i
		}
		for j := range srcPos {
			srcPos[j] = inv[dr0+j]
		}
	}
	rowsFrom := make([][]int, n3) // local destination rows, ascending
	for j, p := range srcPos {
		var c [3]int
		c[rep] = me[rep]
		c[srcL.RowAxis] = srcL.rowOwner(g, p)
		for k := 0; k < g.Size(srcL.ColAxis); k++ {
			c[srcL.ColAxis] = k
			s := g.CubeRank(c[X], c[Y], c[Z])
			rowsFrom[s] = append(rowsFrom[s], j)
		}
	}
	recvCols := make([][2]int, n3)
	for s := 0; s < n3; s++ {
		if len(rowsFrom[s]) == 0 {
			continue
		}
		sc := coords(s)
		s0, s1 := Block(srcL.Cols, g.Size(srcL.ColAxis), sc[srcL.ColAxis])
		c0, c1 := max(s0, dc0), min(s1, dc1)
		if c1 <= c0 {
			continue
		}
		recvCols[s] = [2]int{c0, c1}
		recvCounts[s] = len(rowsFrom[s]) * (c1 - c0)
	}
	recvBuf := make([]float32, sum(recvCounts))
	if err := g.Cube.AlltoallvF32(sendBuf, sendCounts, recvBuf, recvCounts); err != nil {
		return fmt.Errorf("grid: redistributing %v to %v: %w", srcL, dstL, err)
	}
	dw := dc1 - dc0
	off := 0
	for s := 0; s < n3; s++ {
		if recvCounts[s] == 0 {
			continue
		}
		c0, c1 := recvCols[s][0]-dc0, recvCols[s][1]-dc0
		for _, j := range rowsFrom[s] {
			copy(dst[j*dw+c0:j*dw+c1], recvBuf[off:off+c1-c0])
			off += c1 - c0
		}
	}
	return nil
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}
