package gcn

import (
	"time"

	"scalegnn/collectives"
)

// The model's communication: every collective goes through these, which
// skip groups of one, book the time, count the 3D-PMM bytes, and apply the
// Options (bfloat16 sums, nonblocking starts).

// allReduce sums buf over comm, timed; a group of one needs no call.
func (m *Model) allReduce(c collectives.Comm, buf []float32) error {
	return m.allReduceOp(c, buf, collectives.Sum)
}

func (m *Model) allReduceOp(c collectives.Comm, buf []float32, op collectives.Op) error {
	if c.Size() == 1 {
		return nil
	}
	return m.timed(func() error { return c.AllReduceF32(buf, op) })
}

// pmmAllReduce sums a 3D-PMM partial sum over c: in bfloat16 when the
// options ask for it.
func (m *Model) pmmAllReduce(c collectives.Comm, buf []float32) error {
	if c.Size() == 1 {
		return nil
	}
	if !m.Options.BF16 {
		m.PMMBytes += 4 * int64(len(buf))
		return m.allReduce(c, buf)
	}
	m.PMMBytes += 2 * int64(len(buf))
	return m.timed(func() error { return c.AllReduceBF16(buf) })
}

// startAllReduce starts a nonblocking sum over c (bfloat16 if pmm and the
// options ask for it); the returned wait completes it and books the time.
func (m *Model) startAllReduce(c collectives.Comm, buf []float32, pmm bool) (wait func() error, err error) {
	if c.Size() == 1 {
		return func() error { return nil }, nil
	}
	var req collectives.Request
	err = m.timed(func() error {
		var err error
		switch {
		case pmm && m.Options.BF16:
			m.PMMBytes += 2 * int64(len(buf))
			req, err = c.IAllReduceBF16(buf)
		case pmm:
			m.PMMBytes += 4 * int64(len(buf))
			req, err = c.IAllReduceF32(buf, collectives.Sum)
		default:
			req, err = c.IAllReduceF32(buf, collectives.Sum)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return func() error { return m.timed(req.Wait) }, nil
}

// syncDP averages every gradient over the data-parallel group, in float32
// and in one call, so that every replica takes the same optimizer step.
func (m *Model) syncDP() error {
	dp := m.g.DP
	if dp.Size() == 1 {
		return nil
	}
	t0 := time.Now()
	defer func() { m.Times.DP += time.Since(t0) }()
	n := 0
	for _, p := range m.Params {
		n += len(p.G)
	}
	buf := make([]float32, 0, n)
	for _, p := range m.Params {
		buf = append(buf, p.G...)
	}
	if err := dp.AllReduceF32(buf, collectives.Sum); err != nil {
		return err
	}
	inv := 1 / float32(dp.Size())
	for _, p := range m.Params {
		for k := range p.G {
			p.G[k] = buf[k] * inv
		}
		buf = buf[len(p.G):]
	}
	return nil
}

// timed runs a communication call and books its time.
func (m *Model) timed(f func() error) error {
	t0 := time.Now()
	err := f()
	m.Times.Comm += time.Since(t0)
	return err
}

// startOrNot starts a 3D-PMM sum nonblocking when the options ask for
// overlap, and otherwise completes it at once; the returned wait finishes it.
func (m *Model) startOrNot(c collectives.Comm, buf []float32) (wait func() error, err error) {
	if m.Options.Overlap {
		return m.startAllReduce(c, buf, true)
	}
	return func() error { return nil }, m.pmmAllReduce(c, buf)
}
