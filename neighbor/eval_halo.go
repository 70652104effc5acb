package neighbor

import (
	"math"
	"slices"

	"scalegnn/collectives"
	"scalegnn/spmm"
)

// halo is what a rank's layer-by-layer evaluation needs of the other
// ranks' rows: its rows' operator reads the columns of their neighbours,
// and only those rows cross ranks, not every vertex's (an all-gather of
// N × width a layer). Columns are renumbered compactly in increasing
// vertex order: the rows received from lower ranks, the rank's own rows,
// the rows from higher ranks. A row's entries keep their order (and stay
// sorted), so every sum runs as over the whole width, bit for bit.
type halo struct {
	// recvCounts[r] rows come from rank r (none from itself), in
	// increasing vertex order; sendRows[r] are the local rows rank r
	// asked for, in the order it asked.
	recvCounts []int
	sendRows   [][]int32
	sendCounts []int
	rows       int // own rows + received rows: the compact width
	below      int // received rows of lower ranks, before the own rows
	send       []float32
	sc, rc     []int // the element counts of one exchange
}

// newHalo finds the columns of a (rows [V0, V1) of an N-column operator)
// owned by other ranks, asks their owners for them (two alltoallv calls,
// the counts and the ids as float32 bit patterns), and returns the plan;
// a's columns are renumbered to the compact ones, in a copy of its
// column indices (evalRows shares them with the graph).
func newHalo(comm collectives.Comm, g *Graph, a *spmm.CSR) (*halo, error) {
	nb := g.V1 - g.V0
	// pos[v] marks (1) every column of another rank's, then holds its
	// compact number: one pass over the vertices, where sorting the
	// columns and searching each one took 1.7 s of a 4.8 s evaluation at
	// R-MAT scale 19 on 8 ranks sharing 2 cores.
	pos := make([]int32, g.N)
	for _, c := range a.ColIdx {
		if int(c) < g.V0 || int(c) >= g.V1 {
			pos[c] = 1
		}
	}
	var need []int32 // in increasing vertex order; own rows are never marked
	for v := range g.N {
		if pos[v] != 0 {
			k := len(need)
			if v > g.V0 {
				k += nb // after the own rows
			}
			pos[v] = int32(k)
			need = append(need, int32(v))
		}
	}
	h := &halo{recvCounts: make([]int, g.Ranks), sendCounts: make([]int, g.Ranks), sendRows: make([][]int32, g.Ranks),
		sc: make([]int, g.Ranks), rc: make([]int, g.Ranks)}
	for _, v := range need {
		h.recvCounts[g.Owner(v)]++
	}
	// The counts, then the ids.
	one := make([]int, g.Ranks)
	for r := range one {
		one[r] = 1
	}
	cnt := make([]float32, g.Ranks)
	for r, c := range h.recvCounts {
		cnt[r] = float32(c)
	}
	got := make([]float32, g.Ranks)
	if err := comm.AlltoallvF32(cnt, one, got, one); err != nil {
		return nil, err
	}
	total := 0
	for r, c := range got {
		h.sendCounts[r] = int(c)
		total += int(c)
	}
	ids := make([]float32, len(need))
	for i, v := range need {
		ids[i] = math.Float32frombits(uint32(v))
	}
	asked := make([]float32, total)
	if err := comm.AlltoallvF32(ids, h.recvCounts, asked, h.sendCounts); err != nil {
		return nil, err
	}
	off := 0
	for r, c := range h.sendCounts {
		for _, f := range asked[off : off+c] {
			h.sendRows[r] = append(h.sendRows[r], int32(math.Float32bits(f))-int32(g.V0))
		}
		off += c
	}
	// Renumber a's columns, in a copy.
	a.ColIdx = slices.Clone(a.ColIdx)
	h.rows = nb + len(need)
	h.below, _ = slices.BinarySearch(need, int32(g.V0))
	for p, c := range a.ColIdx {
		if int(c) >= g.V0 && int(c) < g.V1 {
			a.ColIdx[p] = int32(h.below) + c - int32(g.V0)
		} else {
			a.ColIdx[p] = pos[c]
		}
	}
	a.Cols = h.rows
	return h, nil
}

// exchange fills full (rows × w, host, the compact numbering) from own
// (the rank's nb rows × w) and the rows the other ranks send. The
// alltoallv receives straight into full: the compact numbering is the
// ranks' rows in rank order, so the rank sends its own rows to itself,
// nb rows copied twice (into the send buffer, then into place) instead
// of the received rows once more (all but nb of full: at 8 ranks on a
// randomly permuted graph, most of the graph).
func (h *halo) exchange(comm collectives.Comm, own []float32, nb, w int, full []float32) error {
	me := comm.Rank()
	n := 0
	for r, rows := range h.sendRows {
		h.sc[r] = len(rows) * w
		if r == me {
			h.sc[r] = nb * w
		}
		n += h.sc[r]
	}
	h.send = resize(h.send, n)
	k := 0
	for r, rows := range h.sendRows {
		if r == me {
			k += copy(h.send[k:], own[:nb*w])
			continue
		}
		for _, i := range rows {
			k += copy(h.send[k:], own[int(i)*w:(int(i)+1)*w])
		}
	}
	for r, c := range h.recvCounts {
		h.rc[r] = c * w
		if r == me {
			h.rc[r] = nb * w
		}
	}
	return comm.AlltoallvF32(h.send, h.sc, full[:h.rows*w], h.rc)
}
