//go:build cgo

package device

import "scalegnn/device/internal/ckern"

type triadC triadGo

func (t *triadC) run(lo, hi int) { ckern.Triad(t.a, t.b, t.c, t.s, lo, hi) }

// Triad runs the triad in C on d's worker pool, as d's kernels run.
func (d *CPU) Triad(a, b, c Buffer[float32], s float32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	j := &triadC{a.host, b.host, c.host, s}
	d.pool.run(j, len(a.host), len(a.host))
}
