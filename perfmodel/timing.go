package perfmodel

import (
	"math"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
)

// KernelTime returns the predicted seconds of one local kernel in
// float32. For the Plexus SpMM form it returns 0 for SpMMs: that form is
// per layer (see plexusSpMM).
func (m *Machine) KernelTime(k Kernel) float64 { return m.kernelTime(k, device.Float32) }

// kernelTime is KernelTime in precision p: in mixed precision the SpMMs
// and GEMMs cost what m.BF16 says, where the profile has it, except a GAT
// layer's per-head kernels (Kernel.Heads), which every device runs in
// float32.
func (m *Machine) kernelTime(k Kernel, p device.Precision) float64 {
	sp, gm := m.SpMM, m.GEMM
	if p == device.BF16 && m.HasBF16() && !k.Heads {
		sp, gm = m.BF16.SpMM, m.BF16.GEMM
	}
	switch k.Kind {
	case KernelSpMM:
		if sp.Form != SpMMLinear {
			return 0
		}
		w := float64(k.Width)
		return sp.Call + sp.NNZ*k.NNZ + sp.FMA*k.NNZ*w + sp.Out*float64(k.Rows)*w + sp.In*float64(k.Inner)*w +
			sp.Miss*missLines(k.NNZ, k.Inner, k.Width, sp.Cache)
	case KernelGEMM:
		c := gm.NN
		switch {
		case k.TransA:
			c = gm.TN
		case k.TransB:
			c = gm.NT
		}
		mm, nn, kk := float64(k.M), float64(k.N), float64(k.K)
		return c.Call + c.FMA*mm*nn*kk + c.Elem*(mm*kk+kk*nn+mm*nn)
	}
	return m.Elementwise.Elem * k.Elems
}

// missLines is the SpMM cache term's feature: the cache lines of B's rows
// the nonzeros read, times the fraction of B that does not fit in cache
// bytes.
func missLines(nnz float64, inner, width int, cache float64) float64 {
	b := 4 * float64(inner) * float64(width)
	if b <= cache || b == 0 {
		return 0
	}
	return nnz * math.Ceil(4*float64(width)/64) * (1 - cache/b)
}

// plexusSpMM is Plexus eq. 4.4 for the SpMMs of one training step (both
// directions), summed over the layers.
func (m *Machine) plexusSpMM(j Job, s grid.Shape) float64 {
	var t float64
	n := float64(j.N)
	for l, sp := range j.layers() {
		p, q, r := grid.Rotation(l)
		d := float64(sp.in)
		gq := float64(s.Size(q))
		bwds := 1.0
		if sp.heads > 0 {
			// A GAT rank aggregates all C columns of its shard block, the
			// work of a GCN layer of width C·G_Q; backward it runs the
			// SDDMM for dα beside αᵀ·dO, both of that shape.
			d, bwds = float64(sp.proj)*gq, 2
		}
		fwd := n / float64(s.Size(p)) * gq / d
		bwd := n / float64(s.Size(r)) * gq / d
		t += math.Sqrt(float64(j.NNZ)*d) * (m.SpMM.Flops + m.SpMM.Fwd*fwd + bwds*m.SpMM.Bwd*bwd)
	}
	return math.Max(t, 0)
}

// CollectiveTime returns the predicted seconds of one collective over a
// group whose link is l: all-reduce as Rabenseifner / ring,
// 2⌈log2 p⌉·α + 2(p−1)/p·M/β, plus l.Large·M when M ≥ l.LargeFrom (the
// fresh temporary buffer of a large all-reduce, Link); all-gather and
// reduce-scatter half of the first two terms; broadcast
// ⌈log2 p⌉·(α + M/β); alltoallv (p−1)·α + (M − self)/β.
func CollectiveTime(c Collective, l Link) float64 {
	p := float64(c.Size)
	if c.Size <= 1 {
		return 0
	}
	bw := l.Bandwidth * 1e9
	m := float64(c.Bytes())
	steps := math.Ceil(math.Log2(p))
	switch c.Kind {
	case collectives.KindAllReduce:
		return 2*steps*l.Latency + 2*(p-1)/p*m/bw + l.largeTime(m)
	case collectives.KindAllGather, collectives.KindReduceScatter:
		return steps*l.Latency + (p-1)*m/bw
	case collectives.KindBcast:
		return steps * (l.Latency + m/bw)
	}
	return (p-1)*l.Latency + float64(c.Elems-c.SelfElems)*float64(c.ElemBytes)/bw
}

// largeTime is the extra time of an all-reduce of m bytes on link l: the
// page faults of its temporary buffer when malloc maps it afresh
// (Link.LargeFrom, Link.Large). Only the all-reduce pays it: broadcasts of
// 16 to 67 MB, which take no temporary buffer, were measured without the
// step (README, "CAGNET 1.5D"), and the other collectives have not been
// measured above it.
func (l Link) largeTime(m float64) float64 {
	if l.Large <= 0 || m < l.LargeFrom {
		return 0
	}
	return l.Large * m
}

// Links returns the link each group of grid s uses when ranksPerNode
// consecutive world ranks share a node (0: one node). A group whose ranks
// all share a node uses the intra-node link. Otherwise it uses the
// inter-node link, whose bandwidth is divided among the groups of that axis
// that leave one node at once (Plexus eq. 4.6: for Z that is
// min(G_node, Gx·Gy)); for the 3D group's alltoallv, among the ranks.
func (m *Machine) Links(s grid.Shape, ranksPerNode int) map[Group]Link {
	g := s.Ranks()
	if ranksPerNode <= 0 || ranksPerNode > g {
		ranksPerNode = g
	}
	node := func(r int) int { return r / ranksPerNode }
	ids := func(grp Group, r int) int {
		d, x, y, z := s.Coords(r)
		switch grp {
		case GroupX:
			return s.Rank(d, 0, y, z)
		case GroupY:
			return s.Rank(d, x, 0, z)
		case GroupZ:
			return s.Rank(d, x, y, 0)
		case GroupCube:
			return s.Rank(d, 0, 0, 0)
		}
		return s.Rank(0, x, y, z)
	}
	out := map[Group]Link{}
	for grp := GroupX; grp <= GroupDP; grp++ {
		firstNode := map[int]int{}
		spans := map[int]bool{}
		for r := 0; r < g; r++ {
			id := ids(grp, r)
			if n, ok := firstNode[id]; !ok {
				firstNode[id] = node(r)
			} else if n != node(r) {
				spans[id] = true
			}
		}
		if len(spans) == 0 {
			out[grp] = m.Comm.Intra
			continue
		}
		// How many spanning groups (ranks, for the cube) leave each node.
		share := 0
		perNode := map[int]map[int]bool{}
		ranksOut := map[int]int{}
		for r := 0; r < g; r++ {
			id := ids(grp, r)
			if !spans[id] {
				continue
			}
			if perNode[node(r)] == nil {
				perNode[node(r)] = map[int]bool{}
			}
			perNode[node(r)][id] = true
			ranksOut[node(r)]++
		}
		for n, set := range perNode {
			k := len(set)
			if grp == GroupCube {
				k = ranksOut[n]
			}
			share = max(share, k)
		}
		l := m.Comm.Inter
		l.Bandwidth /= float64(max(share, 1))
		out[grp] = l
	}
	return out
}

// addKernels adds weight times the machine's time of each kernel to the
// prediction's part for its kind: SpMM, GEMM, or Other for the
// element-wise work. Every algorithm's prediction splits its kernels so.
func (p *Prediction) addKernels(m *Machine, prec device.Precision, ks []Kernel, weight float64) {
	for _, k := range ks {
		t := weight * m.kernelTime(k, prec)
		switch k.Kind {
		case KernelSpMM:
			p.SpMM += t
		case KernelGEMM:
			p.GEMM += t
		default:
			p.Other += t
		}
	}
}
