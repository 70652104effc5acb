package neighbor

import (
	"scalegnn/gcn"
	"scalegnn/sampler"
	"scalegnn/spmm"
)

// Batch is everything one step reads that can be built ahead of training
// without a message: the seeds, their labels, the sampled MFGs, each
// layer's weighted operator and its transpose, and the plan of the
// feature exchange. A Prefetcher builds it into recycled storage.
type Batch struct {
	Step   int
	Seeds  []int32
	Labels []int32
	MFGs   sampler.MFGs

	// Fwd[l] is layer l's operator (nDst×nSrc), Bwd[l] its transpose.
	// For SAGE Fwd[l] is the MFG's own CSR (mean weights); gcnA holds
	// the GCN operators, or the GAT patterns (sampled neighbours and the
	// self loop, values unused).
	Fwd  []*spmm.CSR
	Bwd  []spmm.CSR
	gcnA []spmm.CSR
	// Perm[l] (GAT only) maps Bwd[l]'s entries to Fwd[l]'s:
	// Perm[l][q] is the position in Fwd[l] of Bwd[l]'s entry q
	// (spmm.TransposePerm), so the backward pass reads the per-edge
	// attention coefficients through the transpose without reordering
	// them.
	Perm [][]int32

	Plan Plan
}

// Plan is how a step's input frontier is assembled: Local[k] rows come
// from this rank's block (frontier row LocalAt[k] is block row Local[k]),
// the rest are requested, grouped by owner: Request holds the ids,
// RequestCount[r] how many go to rank r, RequestAt the frontier row each
// answer fills.
type Plan struct {
	Local, LocalAt []int32
	Request        []int32
	RequestCount   []int
	RequestAt      []int32

	next []int // plan's scratch: the next slot of each owner's group
}

// Builder builds batches for one rank: the seeds of a step, the fused
// sampler over the whole topology, the weights of the model's layer kind
// and the exchange plan. Its BuildInto runs in a Prefetcher's goroutine.
type Builder struct {
	g     *Graph
	seeds *Seeds
	samp  *sampler.NeighborSampler
	layer gcn.Layer
	seed  uint64
}

// NewBuilder returns the batch builder of one rank. fanouts has one entry
// per layer, first layer first, each at least 1; seed keys the sampling.
func NewBuilder(g *Graph, seeds *Seeds, layer gcn.Layer, fanouts []int, seed uint64) *Builder {
	return &Builder{g: g, seeds: seeds, samp: sampler.NewNeighborSampler(g.Topo, fanouts, sampler.NeighborOptions{}), layer: layer, seed: seed}
}

// Close stops the sampler's workers.
func (b *Builder) Close() { b.samp.Close() }

// NewBatch returns an empty batch (the Prefetcher's alloc).
func (b *Builder) NewBatch() *Batch { return &Batch{} }

// BuildInto builds step's batch into dst, reusing its storage.
func (b *Builder) BuildInto(step int, dst *Batch) error {
	g := b.g
	dst.Step = step
	dst.Seeds = b.seeds.Into(resize(dst.Seeds, b.seeds.Batch()), step)
	dst.Labels = resize(dst.Labels, len(dst.Seeds))
	for i, v := range dst.Seeds {
		dst.Labels[i] = g.Labels[v]
	}
	b.samp.SampleInto(&dst.MFGs, dst.Seeds, sampler.Key{Seed: b.seed, Step: step})
	L := len(dst.MFGs.Layers)
	dst.Fwd = resize(dst.Fwd, L)
	dst.Bwd = resizeKeep(dst.Bwd, L)
	dst.gcnA = resizeKeep(dst.gcnA, L)
	for l := range L {
		m := &dst.MFGs.Layers[l]
		switch b.layer {
		case gcn.SAGELayer:
			dst.Fwd[l] = &m.A
		case gcn.GATLayer:
			gatPattern(&dst.gcnA[l], m)
			dst.Fwd[l] = &dst.gcnA[l]
		default:
			gcnWeights(&dst.gcnA[l], m, g)
			dst.Fwd[l] = &dst.gcnA[l]
		}
		if b.layer == gcn.GATLayer {
			dst.Perm = resizeKeep(dst.Perm, L)
			transposePermInto(&dst.Bwd[l], &dst.Perm[l], dst.Fwd[l])
		} else {
			transposeInto(&dst.Bwd[l], dst.Fwd[l])
		}
	}
	b.plan(&dst.Plan, dst.MFGs.Input())
	return nil
}

// plan splits the input frontier into owned rows and requests grouped by
// owner (in frontier order within a group).
func (b *Builder) plan(p *Plan, frontier []int32) {
	g := b.g
	p.Local, p.LocalAt = p.Local[:0], p.LocalAt[:0]
	p.RequestCount = resize(p.RequestCount, g.Ranks)
	clear(p.RequestCount)
	for i, v := range frontier {
		if o := g.Owner(v); o == g.Rank {
			p.Local = append(p.Local, v-int32(g.V0))
			p.LocalAt = append(p.LocalAt, int32(i))
		} else {
			p.RequestCount[o]++
		}
	}
	n := len(frontier) - len(p.Local)
	p.Request, p.RequestAt = resize(p.Request, n), resize(p.RequestAt, n)
	// Counting sort by owner: next[r] is the next slot of rank r's group.
	p.next = resize(p.next, g.Ranks)
	next := p.next
	next[0] = 0
	for r, off := 1, 0; r < g.Ranks; r++ {
		off += p.RequestCount[r-1]
		next[r] = off
	}
	for i, v := range frontier {
		if o := g.Owner(v); o != g.Rank {
			p.Request[next[o]], p.RequestAt[next[o]] = v, int32(i)
			next[o]++
		}
	}
}

// resizeKeep returns s with length n, keeping its elements' storage.
func resizeKeep[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return append(s[:cap(s)], make([]T, n-cap(s))...)
}
