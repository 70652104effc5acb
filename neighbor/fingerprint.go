package neighbor

import (
	"math"

	"scalegnn/collectives"
	"scalegnn/internal/counter"
)

// Fingerprint identifies the dataset a neighbor-mode model was trained
// on, for its checkpoints: the vertices, the nonzeros of Â, and order-free
// sums of a 32-bit hash of every feature entry (vertex, column, value)
// and of every label with its split, so that a resume on another dataset
// is refused. Each rank hashes its own feature block and the whole
// topology's labels are hashed by their owners; one all-reduce sums them
// (collective over comm, whose ranks are the hybrid partition's).
func (g *Graph) Fingerprint(comm collectives.Comm) (n, nnz int64, features, labels uint64, err error) {
	const key = 0x6e65696768626f72 // "neighbor"
	var s [2]int64
	for i := range g.V1 - g.V0 {
		v := uint64(g.V0 + i)
		for c, x := range g.Features[i*g.F : (i+1)*g.F] {
			if x != 0 {
				s[0] += int64(counter.Hash4(key, v, uint64(c), uint64(math.Float32bits(x))) >> 32)
			}
		}
		bits := uint64(uint32(g.Labels[v]))
		for b, in := range []bool{g.Train[v], g.Val[v], g.Test[v]} {
			if in {
				bits |= 1 << (32 + b)
			}
		}
		s[1] += int64(counter.Hash4(key, v, math.MaxUint32, bits) >> 32)
	}
	if err := comm.AllReduceI64(s[:], collectives.Sum); err != nil {
		return 0, 0, 0, 0, err
	}
	return int64(g.N), int64(g.Hat.NNZ()), uint64(s[0]), uint64(s[1]), nil
}
