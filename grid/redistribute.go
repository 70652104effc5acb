package grid

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
)

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
//
// Which rows and columns go to which rank (the plan) depends only on the
// two layouts and rowMap, so the Grid keeps the plans of its last few
// (srcL, dstL, rowMap) and the send and receive buffers: a training step,
// which repeats the same redistributions, makes no allocation here. A
// plan is found by comparing rowMap's contents, not its address, so a
// caller may rewrite a row map in place (a mini-batch's). Like every
// collective, Redistribute must not run on two goroutines of one rank at
// once.
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
	if g.redist == nil {
		g.redist = new(redistCache)
	}
	rc := g.redist
	p := rc.plan(g, srcL, dstL, rowMap)

	n3 := len(p.sendCounts)
	sendBuf := growF32(&rc.send, p.sendTotal)
	sw := sc1 - sc0
	k := 0
	for t := range n3 {
		if p.sendCounts[t] == 0 {
			continue
		}
		c0, c1 := p.sendCols[t][0], p.sendCols[t][1]
		for _, r := range p.sendRows[p.sendRuns[t][0]:p.sendRuns[t][1]] {
			k += copy(sendBuf[k:], src[int(r)*sw+c0:int(r)*sw+c1])
		}
	}
	recvBuf := growF32(&rc.recv, p.recvTotal)
	if err := g.Cube.AlltoallvF32(sendBuf, p.sendCounts, recvBuf, p.recvCounts); err != nil {
		return fmt.Errorf("grid: redistributing %v to %v: %w", srcL, dstL, err)
	}
	dw := dc1 - dc0
	off := 0
	for s := range n3 {
		if p.recvCounts[s] == 0 {
			continue
		}
		c0, c1 := p.recvCols[s][0], p.recvCols[s][1]
		for _, j := range p.recvRows[p.recvRuns[s][0]:p.recvRuns[s][1]] {
			copy(dst[int(j)*dw+c0:int(j)*dw+c1], recvBuf[off:off+c1-c0])
			off += c1 - c0
		}
	}
	return nil
}

// maxPlans is how many redistribution plans a Grid keeps: a full-graph
// step has one or two per layer (forward, and SAGE's backward).
const maxPlans = 8

// redistCache is a Grid's plans, most recently used first, and the buffers
// every plan shares.
type redistCache struct {
	plans      []*redistPlan
	send, recv []float32
	// out is plan building's scratch: the source rows by destination.
	out []rowRef
	inv []int32
}

// rowRef is a source row: its destination position and its local index.
type rowRef struct{ pos, local int }

// redistPlan is what Redistribute sends and receives for one key.
type redistPlan struct {
	// The key: the layouts (RowBounds in storage of the plan's own) and
	// a copy of the row map (nil for the identity).
	srcL, dstL Layout
	rowMap     []int32
	// The storage of the key's slices, kept when a key has none.
	srcBounds, dstBounds []int
	mapStore             []int32

	sendCounts, recvCounts []int
	sendTotal, recvTotal   int
	// sendRows are the local source rows in send order; those for Cube
	// rank t are sendRows[sendRuns[t][0]:sendRuns[t][1]], columns
	// sendCols[t] of the local block. recvRows are the local destination
	// rows, ascending per source rank s, likewise.
	sendRows, recvRows []int32
	sendRuns, sendCols [][2]int
	recvRuns, recvCols [][2]int
}

// matches reports whether p is the plan of (srcL, dstL, rowMap).
func (p *redistPlan) matches(srcL, dstL Layout, rowMap []int32) bool {
	return sameLayout(p.srcL, srcL) && sameLayout(p.dstL, dstL) &&
		(p.rowMap == nil) == (rowMap == nil) && slices.Equal(p.rowMap, rowMap)
}

func sameLayout(a, b Layout) bool {
	return a.Rows == b.Rows && a.Cols == b.Cols && a.RowAxis == b.RowAxis && a.ColAxis == b.ColAxis &&
		(a.RowBounds == nil) == (b.RowBounds == nil) && slices.Equal(a.RowBounds, b.RowBounds)
}

// plan returns the plan of (srcL, dstL, rowMap), building it, into the
// storage of the least recently used plan once maxPlans are kept, when
// it is not cached.
func (rc *redistCache) plan(g *Grid, srcL, dstL Layout, rowMap []int32) *redistPlan {
	for i, p := range rc.plans {
		if p.matches(srcL, dstL, rowMap) {
			copy(rc.plans[1:i+1], rc.plans[:i])
			rc.plans[0] = p
			return p
		}
	}
	var p *redistPlan
	if len(rc.plans) < maxPlans {
		p = new(redistPlan)
		rc.plans = append(rc.plans, nil)
	} else {
		p = rc.plans[len(rc.plans)-1]
	}
	copy(rc.plans[1:], rc.plans[:len(rc.plans)-1])
	rc.plans[0] = p
	rc.build(p, g, srcL, dstL, rowMap)
	return p
}

// build fills p for (srcL, dstL, rowMap), reusing its storage.
func (rc *redistCache) build(p *redistPlan, g *Grid, srcL, dstL Layout, rowMap []int32) {
	p.srcL, p.dstL = srcL, dstL
	p.srcL.RowBounds = keep(&p.srcBounds, srcL.RowBounds)
	p.dstL.RowBounds = keep(&p.dstBounds, dstL.RowBounds)
	p.rowMap = keep(&p.mapStore, rowMap)

	sr0, sr1, sc0, sc1 := g.Local(srcL)
	dr0, dr1, dc0, dc1 := g.Local(dstL)
	rep := srcL.Replica()
	n3 := g.X * g.Y * g.Z
	coords := func(t int) [3]int {
		_, x, y, z := g.Shape.Coords(t)
		return [3]int{x, y, z}
	}
	me := [3]int{g.CX, g.CY, g.CZ}
	p.sendCounts = zeroed(&p.sendCounts, n3)
	p.recvCounts = zeroed(&p.recvCounts, n3)
	p.sendRuns = zeroed(&p.sendRuns, n3)
	p.sendCols = zeroed(&p.sendCols, n3)
	p.recvRuns = zeroed(&p.recvRuns, n3)
	p.recvCols = zeroed(&p.recvCols, n3)

	// Source side: local rows sorted by destination position, so the rows
	// bound for one destination row block form one run.
	out := zeroed(&rc.out, sr1-sr0)
	for i := range out {
		pos := sr0 + i
		if rowMap != nil {
			pos = int(rowMap[pos])
		}
		out[i] = rowRef{pos, i}
	}
	slices.SortFunc(out, func(a, b rowRef) int { return cmp.Compare(a.pos, b.pos) })
	p.sendRows = zeroed(&p.sendRows, len(out))
	for i, r := range out {
		p.sendRows[i] = int32(r.local)
	}
	p.sendTotal = 0
	for t := range n3 {
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
		p.sendRuns[t] = [2]int{first, last}
		p.sendCols[t] = [2]int{c0 - sc0, c1 - sc0}
		p.sendCounts[t] = (last - first) * (c1 - c0)
		p.sendTotal += p.sendCounts[t]
	}

	// Destination side: each of my rows comes from the source rank of
	// every column block of the source row that holds it, in this
	// replica. Counted first, then placed, ascending per source.
	var inv []int32
	if rowMap != nil {
		inv = zeroed(&rc.inv, dstL.Rows)
		for i, q := range rowMap {
			inv[q] = int32(i)
		}
	}
	srcPos := func(j int) int {
		if inv == nil {
			return dr0 + j
		}
		return int(inv[dr0+j])
	}
	from := func(j, k int) int {
		var c [3]int
		c[rep] = me[rep]
		c[srcL.RowAxis] = srcL.rowOwner(g, srcPos(j))
		c[srcL.ColAxis] = k
		return g.CubeRank(c[X], c[Y], c[Z])
	}
	nc := g.Size(srcL.ColAxis)
	for j := range dr1 - dr0 {
		for k := range nc {
			p.recvRuns[from(j, k)][1]++ // a count, for now
		}
	}
	total := 0
	for s := range n3 {
		n := p.recvRuns[s][1]
		p.recvRuns[s] = [2]int{total, total} // [first, next free)
		total += n
	}
	p.recvRows = zeroed(&p.recvRows, total)
	for j := range dr1 - dr0 {
		for k := range nc {
			run := &p.recvRuns[from(j, k)]
			p.recvRows[run[1]] = int32(j)
			run[1]++
		}
	}
	p.recvTotal = 0
	for s := range n3 {
		rows := p.recvRuns[s][1] - p.recvRuns[s][0]
		if rows == 0 {
			continue
		}
		sc := coords(s)
		s0, s1 := Block(srcL.Cols, g.Size(srcL.ColAxis), sc[srcL.ColAxis])
		c0, c1 := max(s0, dc0), min(s1, dc1)
		if c1 <= c0 {
			continue
		}
		p.recvCols[s] = [2]int{c0 - dc0, c1 - dc0}
		p.recvCounts[s] = rows * (c1 - c0)
		p.recvTotal += p.recvCounts[s]
	}
}

// zeroed returns (*s)[:n] cleared, reallocating *s when it is too short.
func zeroed[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	*s = (*s)[:n]
	clear(*s)
	return *s
}

// keep copies src into the storage *store and returns the copy; nil
// stays nil (and *store keeps its memory for a later key).
func keep[T any](store *[]T, src []T) []T {
	if src == nil {
		return nil
	}
	*store = append((*store)[:0], src...)
	return *store
}

// growF32 returns (*s)[:n], reallocating *s when it is too short.
func growF32(s *[]float32, n int) []float32 {
	if cap(*s) < n {
		*s = make([]float32, n)
	}
	return (*s)[:n]
}
