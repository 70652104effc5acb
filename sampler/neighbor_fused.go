package sampler

import "scalegnn/spmm"

// layerJob is the pass over one layer's rows that the pool's workers run.
type layerJob struct {
	s     *NeighborSampler
	pass  int
	layer int
	key   Key
	dst   []int32 // the layer's destinations (global ids)
	ptr   []int64 // where row i's sampled neighbors go: [ptr[i], ptr[i+1])
	cols  []int32 // receives the sampled neighbors (global ids)
	rows  []int32 // passCOO: receives each edge's destination (global id)
	a     *spmm.CSR
}

const (
	passSample = iota // draw each row's neighbors into cols
	passCOO           // the same, and write each edge's row into rows
	passFinish        // sort a's rows and write their mean weights
)

func (j *layerJob) run(lo, hi, w int) {
	if j.pass == passFinish {
		finishRows(j.a, lo, hi)
		return
	}
	s := j.s
	rp, ci := s.adj.RowPtr, s.adj.ColIdx
	for i := lo; i < hi; i++ {
		v := j.dst[i]
		p, q := j.ptr[i], j.ptr[i+1]
		choose(j.cols[p:q], ci[rp[v]:rp[v+1]], neighborKey(j.key, j.layer, v), &s.sets[w])
		if j.pass == passCOO {
			for e := p; e < q; e++ {
				j.rows[e] = v
			}
		}
	}
}

// SampleInto draws the MFGs of one step for the given seeds (distinct
// global vertex ids, in the order the last layer's rows should have)
// into dst, reusing its storage: FastSample's fused sampler (Algorithm 1).
// Each layer's MFG is written straight into CSR with compacted ids:
//
//  1. the row pointers come first, since a row keeps min(fanout, degree)
//     neighbors, known before any draw;
//  2. the rows are sampled, in parallel, into their final slots of
//     ColIdx, as global ids;
//  3. one sequential pass over ColIdx in row-major order replaces each
//     global id by its local id, numbering new vertices in order of first
//     appearance (this order is what keeps the output independent of the
//     thread count);
//  4. the rows are sorted and given their weights, in parallel.
//
// There is no COO and no conversion: the sampled list is the CSR's
// ColIdx, relabelled in place. Once dst has held a step as large, nothing
// is allocated. The seeds are copied (into the last layer's Src), so
// their storage is free again when SampleInto returns. It panics with a *UsageError if a seed is out of range or
// repeated.
func (s *NeighborSampler) SampleInto(dst *MFGs, seeds []int32, key Key) {
	L := len(s.fanouts)
	dst.Layers = resizeKeep(dst.Layers, L)
	for l := L - 1; l >= 0; l-- {
		m := &dst.Layers[l]
		d := s.layerDst(dst, seeds, l)
		s.mapDst(m, d)
		f := s.fanouts[l]
		a := &m.A
		a.Rows = len(d)
		a.RowPtr = resize(a.RowPtr, len(d)+1)
		a.RowPtr[0] = 0
		for i, v := range d {
			a.RowPtr[i+1] = a.RowPtr[i] + s.sampledDegree(v, f)
		}
		nnz := a.RowPtr[len(d)]
		a.ColIdx, a.Val = resize(a.ColIdx, int(nnz)), resize(a.Val, int(nnz))

		s.cur = layerJob{s: s, pass: passSample, layer: l, key: key, dst: d, ptr: a.RowPtr, cols: a.ColIdx}
		s.pool.run(&s.cur, len(d), nnz)

		for e, u := range a.ColIdx {
			a.ColIdx[e] = s.local(m, u)
		}
		a.Cols = len(m.Src)

		s.cur = layerJob{pass: passFinish, a: a}
		s.pool.run(&s.cur, len(d), nnz)
		s.cur = layerJob{}
	}
}

// resizeKeep returns s with length n, keeping its elements (and their
// storage) where it can: the per-layer MFGs must survive a resize.
func resizeKeep[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return append(s[:cap(s)], make([]T, n-cap(s))...)
}
