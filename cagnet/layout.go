package cagnet

import (
	"fmt"

	"scalegnn/grid"
)

// Layout is the P/c × c arrangement of a rank: process row Row in [0, Q),
// replica Col in [0, C). Rank r is (r / C, r % C).
type Layout struct {
	P, C, Q  int
	Row, Col int
}

// NewLayout places rank of P ranks with replication c. c must divide P.
func NewLayout(p, c, rank int) (Layout, error) {
	if c < 1 || p < 1 || p%c != 0 {
		return Layout{}, fmt.Errorf("cagnet: grid.replication = %d with %d ranks: replication must divide the rank count (choose c with P mod c = 0)", c, p)
	}
	if rank < 0 || rank >= p {
		panic(fmt.Sprintf("cagnet: rank %d of %d", rank, p))
	}
	return Layout{P: p, C: c, Q: p / c, Row: rank / c, Col: rank % c}, nil
}

// Stages returns the block columns [k0, k1) this rank's replica multiplies:
// one broadcast stage each. With c² | P every replica has P/c² of them.
func (l Layout) Stages() (k0, k1 int) { return grid.Block(l.Q, l.C, l.Col) }

// Rows returns the vertex range of block row i of n vertices.
func (l Layout) Rows(n, i int) (lo, hi int) { return grid.Block(n, l.Q, i) }
