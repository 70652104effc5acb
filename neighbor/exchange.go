package neighbor

import (
	"math"

	"scalegnn/collectives"
)

// Exchanger assembles a step's input features: the rows this rank owns
// are copied from its block, the others come in one feature exchange over
// the training communicator, three AlltoallvF32 calls that count as one
// exchange: the number of ids each rank asks of each other, the ids
// (int32 bit patterns carried as float32, never computed with), and the
// feature rows, answered in the order asked. A rank sends nothing to
// itself but its own count. One rank alone communicates nothing.
type Exchanger struct {
	comm collectives.Comm
	g    *Graph

	one, cnt             []float32 // counts out and in (one value a rank)
	sendCounts, recvCnts []int
	ids, recvIDs         []float32
	rowCountsOut         []int
	rowCountsIn          []int
	rowsOut, rowsIn      []float32
	x                    []float32

	// Requested and Served are the last step's remote rows: asked for by
	// this rank, and sent by it to others.
	Requested, Served int
}

// NewExchanger returns the exchanger of g's rank over comm (the world:
// rank r of comm must own block r).
func NewExchanger(comm collectives.Comm, g *Graph) *Exchanger {
	G := g.Ranks
	return &Exchanger{comm: comm, g: g, one: make([]float32, G), cnt: make([]float32, G),
		sendCounts: make([]int, G), recvCnts: make([]int, G), rowCountsOut: make([]int, G), rowCountsIn: make([]int, G)}
}

// Gather returns the n×F input features of the frontier of plan p, in
// frontier order (host memory, valid until the next call).
func (e *Exchanger) Gather(p *Plan, n int) ([]float32, error) {
	g, F := e.g, e.g.F
	W := RowWords(F, g.BF16())
	e.x = resize(e.x, n*F)
	for k, r := range p.Local {
		g.row(e.x[int(p.LocalAt[k])*F:], int(r))
	}
	e.Requested, e.Served = len(p.Request), 0
	if g.Ranks == 1 {
		return e.x, nil
	}
	// 1. How many ids each rank will ask of each other (one value to
	// every rank, itself included: the displacements stay rank indices).
	for r := range g.Ranks {
		e.sendCounts[r] = 1
		e.one[r] = math.Float32frombits(uint32(p.RequestCount[r]))
	}
	copy(e.recvCnts, e.sendCounts)
	if err := e.comm.AlltoallvF32(e.one, e.sendCounts, e.cnt, e.recvCnts); err != nil {
		return nil, err
	}
	total := 0
	for r := range g.Ranks {
		e.recvCnts[r] = 0
		if r != g.Rank {
			e.recvCnts[r] = int(math.Float32bits(e.cnt[r]))
		}
		total += e.recvCnts[r]
	}
	// 2. The ids.
	e.ids = resize(e.ids, len(p.Request))
	for k, v := range p.Request {
		e.ids[k] = math.Float32frombits(uint32(v))
	}
	e.recvIDs = resize(e.recvIDs, total)
	if err := e.comm.AlltoallvF32(e.ids, p.RequestCount, e.recvIDs, e.recvCnts); err != nil {
		return nil, err
	}
	// 3. The rows, answered in the order asked.
	e.Served = total
	e.rowsOut = resize(e.rowsOut, total*W)
	for k, b := range e.recvIDs {
		g.packRow(e.rowsOut[k*W:(k+1)*W], int(math.Float32bits(b))-g.V0)
	}
	for r := range g.Ranks {
		e.rowCountsOut[r] = e.recvCnts[r] * W
		e.rowCountsIn[r] = p.RequestCount[r] * W
	}
	e.rowsIn = resize(e.rowsIn, len(p.Request)*W)
	if err := e.comm.AlltoallvF32(e.rowsOut, e.rowCountsOut, e.rowsIn, e.rowCountsIn); err != nil {
		return nil, err
	}
	for k, at := range p.RequestAt {
		g.unpackRow(e.x[int(at)*F:], e.rowsIn[k*W:(k+1)*W])
	}
	return e.x, nil
}

// ExchangeBytes is what one rank hands to the collectives in one feature
// exchange on ranks ranks: 4 bytes per count sent to each rank (itself
// included), 4 per requested id, 4·words per served row (0 on one rank),
// words being RowWords (the features, half of them in bfloat16). Summed
// over the ranks, requested = served = R, the remote frontier, so a step
// moves 4·(ranks² + R·(1 + words)) bytes in all.
func ExchangeBytes(requested, served, words, ranks int) int64 {
	if ranks == 1 {
		return 0
	}
	return 4 * int64(ranks+requested+served*words)
}

// GradBytes is the gradient all-reduce of one step, per rank: 4 bytes a
// parameter (0 on one rank).
func GradBytes(params, ranks int) int64 {
	if ranks == 1 {
		return 0
	}
	return 4 * int64(params)
}

// StepBytes is everything one rank hands to the training communicator's
// collectives in one step: the feature exchange and the gradients.
func StepBytes(requested, served, words, params, ranks int) int64 {
	return ExchangeBytes(requested, served, words, ranks) + GradBytes(params, ranks)
}
