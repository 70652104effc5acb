package device

// Test-only access to the devices' worker pools, for the STREAM triad the
// kernel benchmarks are read against.

// triadGo is STREAM's triad a = b + s·c in Go on rows [lo, hi).
type triadGo struct {
	a, b, c []float32
	s       float32
}

func (t *triadGo) run(lo, hi int) {
	a, b, c := t.a[lo:hi], t.b[lo:hi], t.c[lo:hi]
	for k := range a {
		a[k] = b[k] + t.s*c[k]
	}
}

// TriadNative runs the triad in Go on the calling goroutine, as Native's
// element-wise operations run.
func TriadNative(a, b, c Buffer[float32], s float32) {
	j := triadGo{a.host, b.host, c.host, s}
	j.run(0, len(a.host))
}
