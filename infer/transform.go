package infer

import (
	"fmt"
	"time"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/internal/hugepage"
)

// Phase A of a layer: this rank's rows of T = H·W, a block at a time, and
// every vertex's T gathered from all ranks.

// transform computes layer l's T in float32: on several ranks this
// rank's rows are written in their place in every vertex's T (tFull) and
// gathered in place; on one, tLocal is every vertex's.
func (e *Engine) transform(w Weights, l int, s gcn.LayerSpec, width int) (*layerRun, error) {
	var local, full []float32
	if len(e.counts) > 1 {
		full = grow(&e.tFull, e.n*width)
		local = full[e.lo*width : e.hi*width]
	} else {
		local = grow(&e.tLocal, e.n*width)
		full = local
	}
	for k, b := range e.blocks {
		h, err := e.input(w, k, l)
		if err != nil {
			return nil, err
		}
		rows := b[1] - b[0]
		e.gemm(local[(b[0]-e.lo)*width:(b[1]-e.lo)*width], h, rows, s.In, w[weightName(l)], width, false)
	}
	if len(e.counts) > 1 {
		counts := make([]int, len(e.counts))
		for r, c := range e.counts {
			counts[r] = c * width
		}
		if err := e.gather(l, func() error { return e.comm.AllGatherVF32(full, local, counts) }); err != nil {
			return nil, err
		}
		if s.Heads == 0 {
			local = nil // only a GAT layer reads its own rows again
		}
	}
	return &layerRun{e: e, w: w, l: l, s: s, width: width, full: full, local: local}, nil
}

// halfT reports whether layer s's T is kept in bfloat16 only
// (transformBF16): a GCN or SAGE layer in mixed precision, whose T only
// the blocks' SpMMs read, as their bfloat16 operand. A GAT layer's T is
// read by its attention in float32.
func (e *Engine) halfT(s gcn.LayerSpec) bool { return e.roundsT() && s.Heads == 0 }

// transformBF16 computes layer l's T in bfloat16 only (halfT): each of
// this rank's blocks through tBlk, rounded once into its place in tH
// (collectives.EncodeBF16, the rounding PackMatBF16 makes), then every
// vertex's gathered as halfwords, two to a float32 word. A rank's rows
// may be an odd number of halfwords, so the gather places each rank's
// at a word boundary (hwOffsets), one halfword of padding after an odd
// count, and the rows are then moved down to their places, in rank order
// (each moves down by the padding before it, over memory already moved
// or its own). tH holds every vertex's T plus a halfword a rank.
func (e *Engine) transformBF16(w Weights, l int, s gcn.LayerSpec, width int) (*layerRun, error) {
	P, me := len(e.counts), e.comm.Rank()
	padded, words := e.hwOffsets(width)
	h := growHalf(&e.tH, padded[P])
	own := h[padded[me] : padded[me]+e.counts[me]*width]
	for k, b := range e.blocks {
		x, err := e.input(w, k, l)
		if err != nil {
			return nil, err
		}
		rows := b[1] - b[0]
		blk := grow(&e.tBlk, rows*width)
		e.gemm(blk, x, rows, s.In, w[weightName(l)], width, false)
		collectives.EncodeBF16(own[(b[0]-e.lo)*width:], blk)
	}
	if P > 1 {
		all := collectives.Words(h[:padded[P]])
		mine := all[padded[me]/2 : padded[me+1]/2]
		if err := e.gather(l, func() error { return e.comm.AllGatherVF32(all, mine, words) }); err != nil {
			return nil, err
		}
		lo := 0
		for r, c := range e.counts {
			copy(h[lo*width:(lo+c)*width], h[padded[r]:padded[r]+c*width])
			lo += c
		}
	}
	return &layerRun{e: e, w: w, l: l, s: s, width: width, half: h[:e.n*width]}, nil
}

// hwOffsets are the halfword offsets at which transformBF16 gathers each
// rank's rows of a T width wide (padded[r], a word boundary; padded[P]
// the halfwords gathered) and the words each rank sends.
func (e *Engine) hwOffsets(width int) (padded, words []int) {
	padded, words = make([]int, len(e.counts)+1), make([]int, len(e.counts))
	for r, c := range e.counts {
		words[r] = (c*width + 1) / 2
		padded[r+1] = padded[r] + 2*words[r]
	}
	return padded, words
}

// gather runs an all-gather of layer l's T, timed (Times.Gather).
func (e *Engine) gather(l int, f func() error) error {
	t0 := time.Now()
	err := f()
	e.Times.Gather += time.Since(t0)
	if err != nil {
		return fmt.Errorf("infer: gathering layer %d's transformed input: %w", l, err)
	}
	return nil
}

// growHalf is grow for bfloat16 halfwords.
func growHalf(buf *[]uint16, n int) []uint16 {
	if cap(*buf) < n {
		*buf = nil
		*buf = hugepage.MakeResident[uint16](n)
	}
	return (*buf)[:n]
}
