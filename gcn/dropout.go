package gcn

import "scalegnn/device"

// Dropout on the distributed blocks. The masks are counter-based (see
// random.go, which the device's kernels draw exactly as): entry (vertex,
// column) of site `site` at step `step` is kept or dropped the same way on
// every grid, on every device and in the serial reference.

func (m *Model) dropSpec(verts device.Buffer[int32], c0, step, site int) device.Dropout {
	return device.Dropout{Seed: m.Cfg.Seed, Step: step, Site: site, P: m.Cfg.Dropout, Col0: c0, Verts: verts}
}

// dropout returns src with the dropout mask of (step, site) applied; verts
// are the vertex ids of the block's rows and c0 its first global column.
// Outside training, or with p = 0, src itself is returned.
func (m *Model) dropout(src device.Mat, verts device.Buffer[int32], c0 int, training bool, step, site int) device.Mat {
	if !training || m.Cfg.Dropout == 0 {
		return src
	}
	out := m.cur.ar.mat(src.Rows(), src.Cols())
	m.dev.Dropout(out, src, m.dropSpec(verts, c0, step, site))
	return out
}

// dropoutKeep is dropout that also records the mask, for the backward pass
// to apply with applyKeep instead of drawing it again. It draws every
// entry, zeros included; the output is dropout's bit for bit. Outside
// training, or with p = 0, it returns src and no mask.
func (m *Model) dropoutKeep(src device.Mat, verts device.Buffer[int32], c0 int, training bool, step, site int) (device.Mat, mask) {
	if !training || m.Cfg.Dropout == 0 {
		return src, mask{}
	}
	ar := m.cur.ar
	out := ar.mat(src.Rows(), src.Cols())
	bits := ar.u64.take(m.dev, src.Rows()*((src.Cols()+63)/64))
	m.dev.DropoutRecord(out, src, bits, m.dropSpec(verts, c0, step, site))
	return out, mask{bits: bits, ok: true}
}

// applyKeep returns src with a mask recorded by dropoutKeep applied (kept
// entries scaled by 1/(1−p), the others zero); without a mask, src.
func (m *Model) applyKeep(src device.Mat, k mask) device.Mat {
	if k.ok {
		// In place: src is a gradient the backward pass owns (reuse.go).
		m.dev.ApplyMask(src, src, k.bits, m.Cfg.Dropout)
	}
	return src
}
