package gcn

import (
	"time"

	"scalegnn/collectives"
	"scalegnn/device"
)

// The model's communication: every collective goes through these, which
// pass device buffers to package device's collective adapters, skip groups
// of one, book the time, count the 3D-PMM bytes, and apply the Options
// (bfloat16 sums, nonblocking starts).

// allReduce sums buf over c, timed; a group of one needs no call.
func (m *Model) allReduce(c collectives.Comm, buf device.Buffer[float32]) error {
	return m.allReduceOp(c, buf, collectives.Sum)
}

func (m *Model) allReduceOp(c collectives.Comm, buf device.Buffer[float32], op collectives.Op) error {
	if c.Size() == 1 {
		return nil
	}
	t0 := time.Now()
	err := device.AllReduce(m.dev, c, buf, op)
	m.Times.Comm += time.Since(t0)
	return err
}

// pmmAllReduce sums a 3D-PMM partial sum over c: in bfloat16 when the
// options ask for it.
func (m *Model) pmmAllReduce(c collectives.Comm, x device.Mat) error {
	if c.Size() == 1 {
		return nil
	}
	buf := x.Flat()
	if !m.Options.BF16 {
		m.PMMBytes += 4 * int64(buf.Len())
		return m.allReduce(c, buf)
	}
	m.PMMBytes += 2 * int64(buf.Len())
	staging := m.cur.ar.u16.take(m.dev, buf.Len())
	t0 := time.Now()
	err := device.AllReduceBF16(m.dev, c, buf, staging)
	m.Times.Comm += time.Since(t0)
	return err
}

// startAllReduce starts a nonblocking sum over c (bfloat16 if pmm and the
// options ask for it); wait completes it and books the time.
func (m *Model) startAllReduce(c collectives.Comm, buf device.Buffer[float32], pmm bool) (collectives.Request, error) {
	if c.Size() == 1 {
		return nil, nil
	}
	t0 := time.Now()
	defer func() { m.Times.Comm += time.Since(t0) }()
	switch {
	case pmm && m.Options.BF16:
		m.PMMBytes += 2 * int64(buf.Len())
		return device.IAllReduceBF16(m.dev, c, buf, m.cur.ar.u16.take(m.dev, buf.Len()))
	case pmm:
		m.PMMBytes += 4 * int64(buf.Len())
	}
	return device.IAllReduce(m.dev, c, buf, collectives.Sum)
}

// wait completes a request of startAllReduce (nil for a group of one).
func (m *Model) wait(req collectives.Request) error {
	if req == nil {
		return nil
	}
	t0 := time.Now()
	err := req.Wait()
	m.Times.Comm += time.Since(t0)
	return err
}

// startOrNot starts a 3D-PMM sum nonblocking when the options ask for
// overlap, and otherwise completes it at once; wait finishes it.
func (m *Model) startOrNot(c collectives.Comm, x device.Mat) (collectives.Request, error) {
	if m.Options.Overlap {
		return m.startAllReduce(c, x.Flat(), true)
	}
	return nil, m.pmmAllReduce(c, x)
}

// syncDP averages every gradient over the data-parallel group, in float32
// and in one call (the gradients are one buffer), so that every replica
// takes the same optimizer step.
func (m *Model) syncDP() error {
	dp := m.g.DP
	if dp.Size() == 1 {
		m.scaleGrads()
		return nil
	}
	t0 := time.Now()
	defer func() { m.Times.DP += time.Since(t0) }()
	m.scaleGrads() // each worker's own factor, before the average (Grappa eq. 10)
	if err := device.AllReduce(m.dev, dp, m.grads, collectives.Sum); err != nil {
		return err
	}
	all := device.Matrix(m.grads, 1, m.grads.Len())
	m.dev.Scale(all, 1/float32(dp.Size()), all)
	return nil
}
