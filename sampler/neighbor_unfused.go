package sampler

// unfusedScratch is the unfused sampler's intermediate COO and its
// conversion's counters, kept between steps.
type unfusedScratch struct {
	rows, cols []int32         // the sampled edges: destination, source
	off        []int64         // where each destination's edges start in the COO
	next       []int64         // the conversion's fill pointer per row
	ids        map[int32]int32 // HashRelabel's global-to-local map
}

// SampleUnfusedInto draws the same MFGs as SampleInto, array for array,
// the way DGL's sampler did before FastSample: per layer it
//
//  1. samples every destination's neighbors into a COO list of (dst, src)
//     global id pairs;
//  2. compacts it, relabelling both ends of every edge to local ids;
//  3. converts the COO to CSR: counts the edges of each row, sums the
//     counts into row pointers and scatters the columns to their rows.
//
// It is the baseline that measures what fusing is worth, and it shares
// everything else with the fused sampler: the draws (choose), the dense
// global-to-local map and the threads, so the difference is the COO's
// extra memory traffic and the conversion alone.
func (s *NeighborSampler) SampleUnfusedInto(dst *MFGs, seeds []int32, key Key) {
	L := len(s.fanouts)
	dst.Layers = resizeKeep(dst.Layers, L)
	u := &s.unfused
	for l := L - 1; l >= 0; l-- {
		m := &dst.Layers[l]
		d := s.layerDst(dst, seeds, l)
		f := s.fanouts[l]

		// The destinations are mapped (and the seeds checked) first; the
		// sources wait for the compaction.
		s.mapDst(m, d)

		// 1. Sample into COO. The offsets only place each row's edges so
		// that threads can write them at once; they are not kept.
		u.off = resize(u.off, len(d)+1)
		u.off[0] = 0
		for i, v := range d {
			u.off[i+1] = u.off[i] + s.sampledDegree(v, f)
		}
		nnz := u.off[len(d)]
		u.rows, u.cols = resize(u.rows, int(nnz)), resize(u.cols, int(nnz))
		s.cur = layerJob{s: s, pass: passCOO, layer: l, key: key, dst: d, ptr: u.off, cols: u.cols, rows: u.rows}
		s.pool.run(&s.cur, len(d), nnz)
		s.cur = layerJob{}

		// 2. Compact: sources by first appearance after the
		// destinations; both ends of every edge become local ids.
		if s.hashRelabel {
			s.relabelHashed(m, d)
		} else {
			for e := range u.cols {
				u.cols[e] = s.local(m, u.cols[e])
				u.rows[e] = s.mark[u.rows[e]].idx
			}
		}

		// 3. Convert COO to CSR.
		a := &m.A
		a.Rows, a.Cols = len(d), len(m.Src)
		a.RowPtr = resize(a.RowPtr, len(d)+1)
		clear(a.RowPtr)
		for _, r := range u.rows {
			a.RowPtr[r+1]++
		}
		for i := range d {
			a.RowPtr[i+1] += a.RowPtr[i]
		}
		a.ColIdx, a.Val = resize(a.ColIdx, int(nnz)), resize(a.Val, int(nnz))
		u.next = resize(u.next, len(d))
		copy(u.next, a.RowPtr[:len(d)])
		for e, r := range u.rows {
			a.ColIdx[u.next[r]] = u.cols[e]
			u.next[r]++
		}
		s.cur = layerJob{pass: passFinish, a: a}
		s.pool.run(&s.cur, len(d), nnz)
		s.cur = layerJob{}
	}
}

// relabelHashed is step 2 through a hash map (NeighborOptions.HashRelabel),
// numbering exactly as the dense map does. Clearing keeps the map's
// storage, so a steady state allocates nothing here either.
func (s *NeighborSampler) relabelHashed(m *MFG, dst []int32) {
	u := &s.unfused
	if u.ids == nil {
		u.ids = make(map[int32]int32)
	}
	ids := u.ids
	clear(ids)
	for i, v := range dst {
		ids[v] = int32(i)
	}
	for e, c := range u.cols {
		id, ok := ids[c]
		if !ok {
			id = int32(len(m.Src))
			ids[c] = id
			m.Src = append(m.Src, c)
		}
		u.cols[e] = id
		u.rows[e] = ids[u.rows[e]]
	}
}
