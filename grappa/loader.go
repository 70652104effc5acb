package grappa

import "scalegnn/spmm"

// Loader hands one worker its partition super-epoch by super-epoch and
// builds the next one in a goroutine while the current one trains (§3.3:
// the swept chunk is prefetched during the previous super-epoch). Loads
// counts the chunks read, which with an in-memory graph is what a
// prepared dataset would read from disk: one per boundary inside a base
// rotation, two when the base rotates.
type Loader struct {
	adj   *spmm.CSR
	ch    *Chunks
	train []bool
	sc    Schedule
	w     int
	kind  Kind
	hops  int

	s     int
	next  chan Partition
	Loads int
}

// NewLoader starts building worker w's first partition.
func NewLoader(adj *spmm.CSR, ch *Chunks, train []bool, sc Schedule, w int, kind Kind, hops int) *Loader {
	l := &Loader{adj: adj, ch: ch, train: train, sc: sc, w: w, kind: kind, hops: hops}
	l.Loads = 2
	if sc.C == 1 {
		l.Loads = 1
	}
	l.start(0)
	return l
}

func (l *Loader) start(s int) {
	c := make(chan Partition, 1)
	l.next = c
	go func() {
		b, x := l.sc.Partition(l.w, s)
		c <- Build(l.adj, l.ch, l.train, b, x, l.kind, l.hops)
	}()
}

// Next returns the partition of the next super-epoch (the first on the
// first call) and starts prefetching the one after it.
func (l *Loader) Next() Partition {
	p := <-l.next
	if l.s > 0 {
		l.Loads += len(l.sc.Loads(l.w, l.s-1))
	}
	l.s++
	l.start(l.s)
	return p
}

// Close waits for the prefetch in flight, so no goroutine outlives the
// Loader.
func (l *Loader) Close() { <-l.next }
