package gcn

// Dropout on the distributed blocks. The masks are counter-based (see
// random.go): entry (vertex, column) of site `site` at step `step` is kept
// or dropped the same way on every grid and in the serial reference.

// dropout returns src with the dropout mask of (step, site) applied; rows
// are the vertex ids of the block's rows and c0 its first global column.
// Outside training, or with p = 0, src itself is returned.
func (m *Model) dropout(src []float32, verts []int32, c0, width int, training bool, step, site int) []float32 {
	p := m.Cfg.Dropout
	if !training || p == 0 {
		return src
	}
	scale := [2]float32{0, float32(1 / (1 - p))}
	out := make([]float32, len(src))
	m.parallelRows(len(verts), width, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			mask := newDropMask(m.Cfg.Seed, step, site, verts[i], p)
			row, dst := src[i*width:(i+1)*width], out[i*width:(i+1)*width]
			for j, x := range row {
				// A zero stays zero whatever the mask says; sparse inputs
				// (bag-of-words features) skip most draws this way.
				if x != 0 {
					dst[j] = x * scale[mask.keep01(c0+j)]
				}
			}
		}
	})
	return out
}

// dropoutKeep is dropout that also returns the mask as bits, one row per
// ceil(width/64) words (rows never share a word, so rows can be filled in
// parallel), for the backward pass to apply with applyKeep instead of
// drawing it again. It draws every entry, zeros included; the output is
// dropout's bit for bit. Outside training, or with p = 0, it returns src
// and a nil mask.
func (m *Model) dropoutKeep(src []float32, verts []int32, c0, width int, training bool, step, site int) ([]float32, []uint64) {
	p := m.Cfg.Dropout
	if !training || p == 0 {
		return src, nil
	}
	scale := [2]float32{0, float32(1 / (1 - p))}
	out := make([]float32, len(src))
	wpr := (width + 63) / 64
	keep := make([]uint64, len(verts)*wpr)
	m.parallelRows(len(verts), width, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			mask := newDropMask(m.Cfg.Seed, step, site, verts[i], p)
			row, dst, bits := src[i*width:(i+1)*width], out[i*width:(i+1)*width], keep[i*wpr:(i+1)*wpr]
			for j, x := range row {
				k := mask.keep01(c0 + j)
				bits[j>>6] |= k << (j & 63)
				dst[j] = x * scale[k]
			}
		}
	})
	return out, keep
}

// applyKeep returns src with a mask recorded by dropoutKeep applied (kept
// entries scaled by 1/(1−p), the others zero). A nil mask returns src.
func (m *Model) applyKeep(src []float32, keep []uint64, width int) []float32 {
	if keep == nil {
		return src
	}
	scale := [2]float32{0, float32(1 / (1 - m.Cfg.Dropout))}
	out := make([]float32, len(src))
	wpr := (width + 63) / 64
	rows := 0
	if width > 0 {
		rows = len(src) / width
	}
	m.parallelRows(rows, width, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row, dst, bits := src[i*width:(i+1)*width], out[i*width:(i+1)*width], keep[i*wpr:(i+1)*wpr]
			for j, x := range row {
				dst[j] = x * scale[bits[j>>6]>>(j&63)&1]
			}
		}
	})
	return out
}
