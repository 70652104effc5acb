package grappa

import (
	"fmt"

	"scalegnn/spmm"
)

// Kind is how a partition's vertex set is formed from its two chunks.
type Kind int

const (
	// Induced keeps only the two chunks' vertices: edges to other chunks
	// are cut, which is the coverage bias the correction factors address.
	Induced Kind = iota
	// Halo adds every vertex within k hops of the partition's training
	// vertices (Grappa's halo nodes, closed to depth k for a k-layer
	// model), so a training vertex's k-hop receptive field is complete.
	Halo
)

// ParseKind maps grappa.partition's value to a Kind.
func ParseKind(s string) (Kind, error) {
	switch s {
	case "induced", "":
		return Induced, nil
	case "halo":
		return Halo, nil
	}
	return 0, fmt.Errorf("grappa: partition %q; set grappa.partition to \"halo\" or \"induced\"", s)
}

// Partition is one worker's training unit for a super-epoch.
type Partition struct {
	// Verts are the partition's vertices, ascending (the local numbering
	// is the position in Verts).
	Verts []int32
	// Train are the local indices of the training vertices whose loss
	// the worker computes: the training vertices of its two chunks (halo
	// vertices never contribute loss, so each training vertex is owned by
	// the partitions that contain its chunk).
	Train []int32
}

// Build forms the partition of chunks base and swept over the adjacency
// adj (square, symmetric, no self loops needed) with the training mask
// train. For Halo it closes the set under hops hops of the training
// vertices by breadth-first search.
func Build(adj *spmm.CSR, ch *Chunks, train []bool, base, swept int, kind Kind, hops int) Partition {
	n := len(ch.Of)
	if adj.Rows != n || len(train) != n {
		panic(fmt.Sprintf("grappa: Build with %d adjacency rows, %d training flags, %d chunked vertices", adj.Rows, len(train), n))
	}
	in := make([]bool, n)
	var frontier []int32
	for _, c := range []int{base, swept} {
		for _, v := range ch.Members[c] {
			if in[v] {
				continue
			}
			in[v] = true
			if train[v] {
				frontier = append(frontier, v)
			}
		}
	}
	owned := append([]int32(nil), frontier...)
	if kind == Halo {
		// The closure starts from the training vertices only: chunk
		// vertices farther than hops from every training vertex stay in
		// (they are the chunk's rows), but only training vertices' balls
		// are needed for exact k-layer outputs at the loss.
		seen := make([]bool, n)
		for _, v := range frontier {
			seen[v] = true
		}
		for h := 0; h < hops && len(frontier) > 0; h++ {
			var next []int32
			for _, v := range frontier {
				for _, u := range adj.ColIdx[adj.RowPtr[v]:adj.RowPtr[v+1]] {
					if !seen[u] {
						seen[u] = true
						in[u] = true
						next = append(next, u)
					}
				}
			}
			frontier = next
		}
	}
	var p Partition
	local := make(map[int32]int32, len(owned))
	for v := range in {
		if in[v] {
			local[int32(v)] = int32(len(p.Verts))
			p.Verts = append(p.Verts, int32(v))
		}
	}
	p.Train = make([]int32, 0, len(owned))
	for _, v := range p.Verts {
		if train[v] && (int(ch.Of[v]) == base || int(ch.Of[v]) == swept) {
			p.Train = append(p.Train, local[v])
		}
	}
	return p
}

// Degrees returns, for each local training vertex of p, its degree in the
// partition's induced subgraph and in the full graph. Both count the
// self-loop GCN adds (Â = A + I), so both are ≥ 1 and an isolated vertex
// has ratio 1: it has no neighbors to miss.
func Degrees(adj *spmm.CSR, p Partition) (local, global []int) {
	in := make(map[int32]bool, len(p.Verts))
	for _, v := range p.Verts {
		in[v] = true
	}
	local, global = make([]int, len(p.Train)), make([]int, len(p.Train))
	for i, t := range p.Train {
		v := p.Verts[t]
		row := adj.ColIdx[adj.RowPtr[v]:adj.RowPtr[v+1]]
		l, g := 1, 1
		for _, u := range row {
			if u == v {
				continue // a stored self loop is the one already counted
			}
			g++
			if in[u] {
				l++
			}
		}
		local[i], global[i] = l, g
	}
	return local, global
}
