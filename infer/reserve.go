package infer

import (
	"scalegnn/device"
	"scalegnn/gcn"
)

// The engine's working memory is taken once, when the engine is made, and
// kept from evaluation to evaluation: every vertex's T at the widest layer
// (the rank's own rows written in their place), one block of features,
// and, where the activations between layers stay in memory, two
// generations of them (a layer's input and its output; the layer after
// writes over the input).
// Its pages are faulted in then (hugepage.MakeResident), so that:
//   - a machine without the memory fails at setup, not at the first
//     evaluation hours into a job;
//   - the first evaluation runs as fast as the later ones. On the 2-core
//     VMs measured, a fresh page's first touch cost 12–14 µs, and the first
//     evaluation at R-MAT scale 20 on 2 ranks, which touched about 1.7 GB a
//     rank for the first time, took 10.3–14.9 s against 2.0–2.6 s for the
//     later ones.
// In mixed precision a GCN or SAGE layer's T is kept in bfloat16 only
// (tH, with a halfword a rank for the gather's word boundaries, and tBlk,
// one block's rows in float32 before they are rounded; transform.go), so
// the float32 T is as wide as the widest GAT layer's, if any.
// These are the buffers perfmodel's layerwiseEvalMemory counts, exactly
// (perfmodel.TestLayerwiseReservation).

// reserve takes the engine's working memory (above).
func (e *Engine) reserve() {
	wT, wA, wB := 0, 0, 0
	for _, s := range e.specs {
		if e.halfT(s) {
			wB = max(wB, tWidth(s))
		} else {
			wT = max(wT, tWidth(s))
		}
		if s.Hidden { // kept as the next layer's (or the output head's) input
			wA = max(wA, s.Out)
		}
	}
	if e.keep0 {
		wA = max(wA, e.specs[0].In) // the first layer's input is kept in generation 0
	}
	own, rows := e.hi-e.lo, 0
	for _, b := range e.blocks {
		rows = max(rows, b[1]-b[0])
	}
	switch {
	case wT == 0:
	case len(e.counts) > 1:
		grow(&e.tFull, e.n*wT)
	default:
		grow(&e.tLocal, e.n*wT)
	}
	grow(&e.x0, rows*e.src.Sizes().Features)
	if wB > 0 {
		padded, _ := e.hwOffsets(wB)
		growHalf(&e.tH, padded[len(e.counts)])
		grow(&e.tBlk, rows*wB)
	}
	if e.store.dir == "" {
		for g := range e.acts {
			grow(&e.acts[g], own*wA)
		}
		e.actWidth = wA
	}
}

// roundsT says T is rounded once per layer (mixed precision: halfT).
func (e *Engine) roundsT() bool { return device.PrecisionOf(e.dev) == device.BF16 && !e.tF32 }

// tWidth is T's width in a layer: its output's, a GAT layer's projection.
func tWidth(s gcn.LayerSpec) int {
	if s.Heads > 0 {
		return s.ProjWidth
	}
	return s.Out
}

// act is where block k's n rows of an activation of width w go in
// generation g (a layer l's input is in generation l%2): its place in the
// reserved memory, or a new slice where the activations are kept in files
// or are wider than the reserved ones (a last layer with more classes than
// hidden units).
func (e *Engine) act(g, k, n, w int) []float32 {
	if w > e.actWidth || e.acts[g] == nil {
		return make([]float32, n*w)
	}
	off := (e.blocks[k][0] - e.lo) * e.actWidth
	return e.acts[g][off : off+n*w : off+n*w]
}

// readFeatures reads block k's features into the engine's block of
// features, or into dst when it is not nil (it holds rows × features).
func (e *Engine) readFeatures(k int, dst []float32) ([]float32, error) {
	b := e.blocks[k]
	f := e.src.Sizes().Features
	if dst == nil {
		dst = grow(&e.x0, (b[1]-b[0])*f)
	}
	if si, ok := e.src.(gcn.SourceInto); ok {
		return dst, si.FeatureBlockInto(dst, 1, b[0], b[1], 0, f)
	}
	x, err := e.src.FeatureBlock(1, b[0], b[1], 0, f)
	copy(dst, x)
	return dst, err
}

// ReservedBytes is the memory reserve took: perfmodel's layer-wise
// evaluation memory counts it (perfmodel.TestLayerwiseReservation).
func (e *Engine) ReservedBytes() int64 {
	n := cap(e.tLocal) + cap(e.tFull) + cap(e.x0) + cap(e.tBlk)
	for _, a := range e.acts {
		n += cap(a)
	}
	return 4*int64(n) + 2*int64(cap(e.tH))
}
