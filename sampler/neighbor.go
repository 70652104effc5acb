package sampler

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"

	"scalegnn/internal/counter"
	"scalegnn/spmm"
)

// Key is the randomness of one training step of neighbor sampling. The
// neighbors drawn for vertex v in GNN layer l are a function of (Seed,
// Step, l, v) alone. The rank is deliberately absent: it decides only
// which seeds a rank samples from, so a vertex reached by several ranks,
// or by one rank of a 1-rank run, gets the same neighbors everywhere, and
// a step's MFGs are the same on 1, 2 or 8 ranks up to how the seeds are
// split.
type Key struct {
	Seed uint64
	Step int
}

// MFG is the message-flow graph of one GNN layer: a bipartite graph from
// source vertices to destination vertices, with compacted (local) ids.
//
// A is nDst×nSrc: row i lists the sampled neighbors of destination i as
// local source ids, ascending and unique (the spmm.CSR contract), and Val
// holds the SAGE-mean weights 1/(sampled degree of the row) unless
// GCNWeights has replaced them. Src holds the global id of every source;
// the destinations are its prefix, Src[i] for i < A.Rows (DGL's
// convention, so a layer's self term reads rows 0..nDst-1 of its input),
// and the vertices first reached in this layer follow in order of first
// appearance in the row-major order of the sampled lists.
type MFG struct {
	A   spmm.CSR
	Src []int32

	colDeg []int32 // GCNWeights' scratch: each source's sampled out-degree
}

// Dst returns the global ids of the destinations, a prefix of Src.
func (m *MFG) Dst() []int32 { return m.Src[:m.A.Rows] }

// MFGs are the message-flow graphs of one step, one per GNN layer in the
// model's order: Layers[0] is the first layer, whose Src is the input
// frontier (the vertices whose features the step reads), and the last
// layer's destinations are the seeds. Layer l's destinations are layer
// l+1's sources, in the same order: Layers[l].Dst() equals
// Layers[l+1].Src, so layer l's output rows are layer l+1's input rows.
// The zero value is ready; a sampler reuses its storage step after step.
type MFGs struct {
	Layers []MFG
}

// Input returns the global ids of the first layer's sources: the
// vertices whose input features the step needs, in the order of the
// first layer's local source ids.
func (b *MFGs) Input() []int32 { return b.Layers[0].Src }

// Seeds returns the global ids of the last layer's destinations.
func (b *MFGs) Seeds() []int32 { return b.Layers[len(b.Layers)-1].Dst() }

// NeighborOptions tunes a NeighborSampler without changing what it draws.
type NeighborOptions struct {
	// Threads is the number of goroutines sampling a layer's rows; <= 0
	// means GOMAXPROCS. The MFGs are the same for every value.
	Threads int
	// HashRelabel makes SampleUnfusedInto relabel through a hash map, as
	// DGL's to_block does, instead of the dense map both samplers share
	// otherwise. FastSample's fused kernel owes part of its speed to its
	// dense map (Algorithm 1's M); this baseline measures that part too.
	// The MFGs are the same.
	HashRelabel bool
}

// NeighborSampler draws the MFGs of GraphSAGE-style neighbor sampling
// from the whole topology: for each layer, from the last to the first, up
// to fanout[l] neighbors of each destination, uniformly without
// replacement; the sources of layer l are the destinations of layer l-1.
// SampleInto is FastSample's fused sampler (Algorithm 1), SampleUnfusedInto
// the COO-then-convert baseline; both give the same arrays.
//
// A NeighborSampler keeps a dense global-to-local map of the graph's
// vertices and a pool of worker goroutines, and is not safe for
// concurrent use: one per goroutine that samples (a Prefetcher's worker
// runs one build at a time). It reads the adjacency, which must not change
// while it is in use. Close stops the workers.
type NeighborSampler struct {
	adj     *spmm.CSR
	fanouts []int

	// mark is the global-to-local map of the layer being built: vertex v
	// has local id mark[v].idx when mark[v].gen == gen. A dense array
	// rather than a hash map: one random access per sampled edge, no
	// hashing or probing, and bumping gen empties it in O(1). It costs 8
	// bytes a vertex, less than the topology it indexes (4 bytes an edge).
	mark []colMark
	gen  uint32

	pool *samplePool
	sets []int32Set // per worker: Floyd's set for fanouts above linearMax

	// The layer being sampled, read by the pool's workers.
	cur layerJob

	unfused     unfusedScratch
	hashRelabel bool
}

// NewNeighborSampler returns a sampler over adj, the whole topology (row v
// lists the vertices whose messages v aggregates; adj must be square), for
// a model with len(fanouts) layers: fanouts[l] is the most neighbors a
// destination of layer l keeps, fanouts[0] for the first layer (the
// outermost hop from the seeds), as in DGL. It panics with a *UsageError
// if adj is not square or a fanout is below 1.
func NewNeighborSampler(adj *spmm.CSR, fanouts []int, opts NeighborOptions) *NeighborSampler {
	if adj == nil || adj.Rows != adj.Cols || len(adj.RowPtr) != adj.Rows+1 || adj.Rows > math.MaxInt32 {
		panic(usagef("NewNeighborSampler needs a square adjacency with Rows+1 row pointers and at most 2^31-1 vertices"))
	}
	if len(fanouts) == 0 {
		panic(usagef("NewNeighborSampler needs at least one fanout (one per GNN layer)"))
	}
	for l, f := range fanouts {
		if f < 1 {
			panic(usagef("NewNeighborSampler: fanouts[%d] = %d; expected at least 1", l, f))
		}
	}
	threads := opts.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	s := &NeighborSampler{
		adj:     adj,
		fanouts: append([]int(nil), fanouts...),
		mark:    make([]colMark, adj.Rows),
		pool:    newSamplePool(threads),
		sets:    make([]int32Set, threads),

		hashRelabel: opts.HashRelabel,
	}
	// The workers reference only the pool, so an unreachable sampler's
	// workers are stopped even without Close.
	runtime.AddCleanup(s, func(p *samplePool) { p.close() }, s.pool)
	return s
}

// Fanouts returns a copy of the fanout of each layer, first layer first.
func (s *NeighborSampler) Fanouts() []int { return slices.Clone(s.fanouts) }

// Close stops the worker goroutines. The sampler must not be used after.
func (s *NeighborSampler) Close() { s.pool.close() }

// UsageError is the panic value of a NeighborSampler called against its
// contract (bad fanouts, seeds out of range or repeated): programmer
// errors, not bad data.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return "sampler: " + e.Msg }

func usagef(format string, args ...any) *UsageError {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// nextGen empties the global-to-local map.
func (s *NeighborSampler) nextGen() {
	s.gen++
	if s.gen == 0 { // wrapped: forget every old tag
		clear(s.mark)
		s.gen = 1
	}
}

// mapDst starts a layer's map and source list with its destinations, at
// local ids 0..len(dst)-1, panicking on a vertex out of range or repeated
// (only seeds can be: later destinations are a layer's distinct sources).
func (s *NeighborSampler) mapDst(m *MFG, dst []int32) {
	s.nextGen()
	m.Src = resize(m.Src, len(dst))
	copy(m.Src, dst)
	n := int32(len(s.mark))
	for i, v := range dst {
		if v < 0 || v >= n {
			panic(usagef("seed %d is outside [0, %d), the graph's vertices", v, n))
		}
		if s.mark[v].gen == s.gen {
			panic(usagef("seed %d is given twice (at %d and %d); seeds must be distinct", v, s.mark[v].idx, i))
		}
		s.mark[v] = colMark{s.gen, int32(i)}
	}
}

// local returns u's local id in the current layer, giving it the next id
// and appending it to the sources when it is new.
func (s *NeighborSampler) local(m *MFG, u int32) int32 {
	mk := &s.mark[u]
	if mk.gen != s.gen {
		mk.gen, mk.idx = s.gen, int32(len(m.Src))
		m.Src = append(m.Src, u)
	}
	return mk.idx
}

// sampledDegree is how many neighbors v keeps in a layer of fanout f.
func (s *NeighborSampler) sampledDegree(v int32, f int) int64 {
	return min(int64(f), s.adj.RowPtr[v+1]-s.adj.RowPtr[v])
}

// layerDst returns the destinations of layer l: the seeds for the last
// layer, the next layer's sources otherwise.
func (s *NeighborSampler) layerDst(out *MFGs, seeds []int32, l int) []int32 {
	if l == len(s.fanouts)-1 {
		return seeds
	}
	return out.Layers[l+1].Src
}

// neighborKey is the hash of (seed, step, layer, vertex) from which every
// draw of v's neighbors in layer l derives.
func neighborKey(k Key, layer int, v int32) uint64 {
	return counter.Hash4(k.Seed, counter.StreamNeighbor<<32|uint64(layer), uint64(k.Step), uint64(v))
}

// linearMax is the fanout up to which Floyd's membership test scans the
// neighbors chosen so far: for the usual fanouts (5 to 25) a scan of a
// few cache-resident words beats hashing.
const linearMax = 32

// choose writes into out (len(out) == min(len(nbrs), k)) a uniform
// k-subset of nbrs, or all of nbrs when it has at most k: Robert Floyd's
// algorithm, one counter-based draw per member, so O(k) whatever the
// degree. nbrs must be distinct (a CSR row is). The order of out is a
// function of (key, nbrs) alone, which is what lets the fused and
// unfused samplers number the sources identically. set is scratch for
// k > linearMax.
func choose(out, nbrs []int32, key uint64, set *int32Set) {
	d, k := len(nbrs), len(out)
	if k == d {
		copy(out, nbrs)
		return
	}
	if k > linearMax {
		set.reset(k)
	}
	for i, j := 0, d-k; j < d; i, j = i+1, j+1 {
		// t uniform in [0, j]: the high word of a 64-bit draw times j+1
		// (Lemire), biased by at most (j+1)/2^64.
		t, _ := bits.Mul64(counter.Mix(key+uint64(j)*0x9e3779b97f4a7c15), uint64(j)+1)
		u := nbrs[t]
		if chosen(out[:i], u, set, k) {
			// t was drawn before: take j, which no earlier round could
			// have drawn (they drew from [0, j)).
			u = nbrs[j]
			if k > linearMax {
				set.add(u)
			}
		}
		out[i] = u
	}
}

// chosen reports whether u is among the neighbors picked so far, adding
// it to the set when it is not (k > linearMax).
func chosen(picked []int32, u int32, set *int32Set, k int) bool {
	if k > linearMax {
		return !set.add(u)
	}
	for _, p := range picked {
		if p == u {
			return true
		}
	}
	return false
}

// sortRow sorts a row's local ids: insertion sort for the short rows of
// usual fanouts, the library sort otherwise.
func sortRow(r []int32) {
	if len(r) > linearMax {
		slices.Sort(r)
		return
	}
	for i := 1; i < len(r); i++ {
		x := r[i]
		j := i
		for ; j > 0 && r[j-1] > x; j-- {
			r[j] = r[j-1]
		}
		r[j] = x
	}
}

// finishRows sorts rows [lo, hi) of a and writes their SAGE-mean weights.
func finishRows(a *spmm.CSR, lo, hi int) {
	for i := lo; i < hi; i++ {
		sortRow(a.ColIdx[a.RowPtr[i]:a.RowPtr[i+1]])
		meanRow(a, i)
	}
}
