package gcn

import (
	"fmt"

	"scalegnn/grid"
)

// NewSubgraphShards returns the training shards, on g (a 1×1×1 grid), of
// sub, the subgraph induced by the vertices at positions pos (ascending)
// of parent, the whole graph's orders, which must agree (no double
// permutation). sub holds those vertices in pos's order: Â's entries
// among them, their features and labels, and Classes of the whole graph.
// The result is the batch a BatchBuilder with Vertices = those vertices
// would cut from the whole graph's shards, weights kept: its orders list
// the vertices' ids, which key dropout and the initial draws. It is how an
// isolated worker trains a partition read from a prepared dataset without
// holding the whole graph's shards.
func NewSubgraphShards(g *grid.Grid, cfg Config, parent *Orders, pos []int32, sub *Graph) (*Shards, error) {
	if g.X*g.Y*g.Z != 1 {
		panic(fmt.Sprintf("gcn: NewSubgraphShards on a %dx%dx%d grid; a subgraph's shards are a worker's whole batch", g.X, g.Y, g.Z))
	}
	if !parent.same() {
		panic("gcn: NewSubgraphShards with two vertex orders; a subgraph's positions are in one")
	}
	n := len(pos)
	if sub.Adj.Rows != n {
		return nil, fmt.Errorf("gcn: subgraph of %d vertices for %d positions", sub.Adj.Rows, n)
	}
	ids := make([]int32, n)
	for i, p := range pos {
		if i > 0 && p <= pos[i-1] {
			panic(fmt.Sprintf("gcn: NewSubgraphShards position %d at %d after %d: want ascending", p, i, pos[i-1]))
		}
		ids[i] = parent.Order[0][p]
	}
	src, err := NewMemorySource(sub, NewOrders(n, nil, nil))
	if err != nil {
		return nil, err
	}
	sh, err := NewShards(g, cfg, src)
	if err != nil {
		return nil, err
	}
	sh.Orders = &Orders{Order: [2][]int32{ids, ids}, parent: parent, pos: [2][]int32{pos, pos}}
	// On one rank the feature block is all of sub's features, in order:
	// keep sub's and let the copy go.
	if len(sh.X) == len(sub.Features) {
		sh.X = sub.Features
	}
	return sh, nil
}
